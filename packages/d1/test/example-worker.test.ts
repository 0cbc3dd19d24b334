import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare, type Request as MiniflareRequest, Response as MiniflareResponse } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from './worker/bundle.ts';

/**
 * Runs docs/examples/d1-worker as written: the Worker, its Durable Object and the D1 store in
 * workerd, its chat-completions adapter answered by a scripted model behind Miniflare's
 * outbound service. The model goes down right after the refund is committed; the Durable
 * Object's alarm resumes the run from D1 and the refund is not issued twice.
 */
const exampleEntry = fileURLToPath(
  new URL('../../../docs/examples/d1-worker/src/worker.ts', import.meta.url),
);
// The example's zod, as the examples workspace package installs it.
const zodDir = dirname(
  createRequire(new URL('../../../examples/package.json', import.meta.url)).resolve('zod/package.json'),
);

interface ChatRequest {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[] }[];
  tools?: { function: { name: string; parameters: { properties?: Record<string, unknown> } } }[];
}

const chatRequests: ChatRequest[] = [];
let modelDown = true;

function completion(message: Record<string, unknown>) {
  return new MiniflareResponse(
    JSON.stringify({ choices: [{ message }], usage: { prompt_tokens: 10, completion_tokens: 5 } }),
    { headers: { 'content-type': 'application/json' } },
  );
}

async function scriptedModel(request: MiniflareRequest) {
  const body = (await request.json()) as ChatRequest;
  chatRequests.push(body);
  const step = body.messages.filter((m) => m.role === 'assistant').length;
  const call = (id: string, name: string, args: unknown) => ({
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
  if (step === 0) return completion(call('call_lookup', 'lookupOrder', { orderId: '42' }));
  if (step === 1) return completion(call('call_refund', 'issueRefund', { orderId: '42', cents: 1999 }));
  if (step === 2 && modelDown) {
    modelDown = false;
    return new MiniflareResponse('upstream overloaded', { status: 503 });
  }
  return completion({ content: step === 2 ? 'Refunded $19.99 for order 42.' : 'You are welcome!' });
}

let mf: Miniflare;

beforeAll(async () => {
  const bundle = await bundleWorker(exampleEntry, {
    external: ['cloudflare:workers'],
    alias: { zod: join(zodDir, 'index.js') },
  });
  expect(bundle.imports).toEqual(['cloudflare:workers']);
  mf = new Miniflare({
    modules: true,
    script: bundle.code,
    compatibilityDate: '2025-09-01',
    d1Databases: { DB: 'example-db' },
    durableObjects: { AGENT_SESSIONS: 'AgentSession' },
    bindings: {
      LLM_BASE_URL: 'https://llm.test/v1',
      LLM_API_KEY: 'k',
      LLM_MODEL: 'scripted',
      // Long enough that a loaded machine keeps the first run's lease; the alarm fires at 2 × TTL.
      LEASE_TTL_MS: '1500',
    },
    outboundService: scriptedModel,
  });
});
afterAll(() => mf?.dispose());

const api = async (path: string, userId: string, body?: unknown) => {
  const response = await mf.dispatchFetch(`http://example${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-user-id': userId, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

type Conversation = {
  headSeq: number;
  messages: { seq: number; role: string; content: string; toolCalls?: unknown[] }[];
};

describe('docs/examples/d1-worker', () => {
  it('a run interrupted by a model outage is finished by the alarm, with one refund', async () => {
    const first = await api('/sessions/order-42/messages', 'u1', { message: 'Please refund order 42' });
    expect(first.body).toMatchObject({ status: 'pending', error: expect.stringContaining('HTTP 503') });

    let conversation: Conversation | undefined;
    for (let tries = 0; tries < 300; tries++) {
      conversation = (await api('/sessions/order-42', 'u1')).body as unknown as Conversation;
      if (conversation.messages.at(-1)?.content === 'Refunded $19.99 for order 42.') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(conversation?.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(conversation?.messages.at(-1)?.content).toBe('Refunded $19.99 for order 42.');

    const db = await mf.getD1Database('DB');
    const refunds = await db.prepare('SELECT order_id, cents FROM refunds').all();
    expect(refunds.results).toEqual([{ order_id: '42', cents: 1999 }]);
    // The adapter sent the zod schemas as JSON Schema.
    expect(chatRequests[0]?.tools?.map((t) => Object.keys(t.function.parameters.properties ?? {}))).toEqual([
      ['orderId'],
      ['orderId', 'cents'],
    ]);
  });

  it('continues the session, and keeps it to its owner', async () => {
    const next = await api('/sessions/order-42/messages', 'u1', { message: 'Thanks!' });
    expect(next.body).toEqual({ status: 'complete', response: 'You are welcome!' });
    expect((await api('/sessions', 'u1')).body).toEqual({ sessions: ['order-42'], nextCursor: null });
    expect((await api('/sessions', 'u2')).body).toEqual({ sessions: [], nextCursor: null });
    expect((await api('/sessions/order-42', 'u2')).status).toBe(404);
  });
});
