import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type LlmAdapter, type LlmMessage, run, tool } from '../src/index.ts';
import { crashAfterToolResults, durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

// A handler (or schema, or reconcile) that mutates what it is given must not change the stored
// call, nor what the next model request or RunResult.messages show: user code gets its own copy.

const ORIGINAL = { to: 'alice', meta: { to: 'alice' } };

const passThrough = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

function mutatingAgent(schema: unknown) {
  return defineAgent({
    name: 'mutates',
    instructions: '',
    tools: {
      work: tool({
        description: 'mutates its input',
        input: schema as typeof passThrough,
        handler: (given) => {
          const input = given as Record<string, unknown>;
          if (typeof input.meta === 'object' && input.meta)
            (input.meta as Record<string, unknown>).to = 'evil';
          input.to = 'evil';
          return 'ok';
        },
      }),
    },
  });
}

/** One call with ORIGINAL as input, then a final answer; keeps what each request carried. */
function recordingModel() {
  const requests: LlmMessage[][] = [];
  let n = 0;
  const llm: LlmAdapter = {
    async generate({ messages }) {
      requests.push(structuredClone(messages));
      n += 1;
      return n === 1
        ? { text: '', toolCalls: [{ id: 'c1', name: 'work', input: structuredClone(ORIGINAL) }] }
        : { text: 'done', toolCalls: [] };
    },
  };
  return { llm, requests };
}

describe('a handler that mutates its input', () => {
  for (const [what, schema] of [
    ['a pass-through schema', passThrough],
    ['z.object({ meta: z.any() })', z.object({ to: z.string(), meta: z.any() })],
    ['z.looseObject({})', z.looseObject({})],
  ] as const) {
    it(`${what}: the store, the next model request and RunResult.messages keep the input as the model sent it`, async () => {
      const store = durableMemoryStore();
      const { llm, requests } = recordingModel();
      const result = await run(mutatingAgent(schema), { store, sessionId: 's', message: 'go', llm });
      expect(result.status).toBe('complete');
      const inputOf = (messages: { toolCalls?: { input: unknown }[] }[]) =>
        messages.find((m) => m.toolCalls)!.toolCalls![0]!.input;
      expect(inputOf((await store.load('s'))!.messages)).toEqual(ORIGINAL);
      expect(inputOf(requests[1]!)).toEqual(ORIGINAL);
      expect(inputOf(result.messages)).toEqual(ORIGINAL);
    });
  }
});

describe('reconcile that mutates its input and context', () => {
  it('the handler it falls back to gets a fresh input and context; the stored origin is the real attempt', async () => {
    const store = durableMemoryStore();
    const seen: { input: unknown; attempt: number; key: string }[] = [];
    const agent = defineAgent({
      name: 'rec',
      instructions: '',
      tools: {
        charge: tool({
          description: 'reconcilable',
          input: z.looseObject({ cents: z.number() }),
          handler: (input, ctx) => {
            seen.push({ input: structuredClone(input), attempt: ctx.attempt, key: ctx.idempotencyKey });
            return 'charged';
          },
          reconcile: (input, ctx) => {
            (input as Record<string, unknown>).cents = 999_999;
            Object.assign(ctx, { attempt: 99, idempotencyKey: 'forged' });
            return { happened: false };
          },
        }),
      },
    });
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'c1', name: 'charge', input: { cents: 5 } }] },
      { text: 'done' },
    ]);
    // The process dies before the handler's result is stored: the call is left open.
    await expect(
      run(agent, {
        store: crashAfterToolResults(store),
        sessionId: 's',
        message: 'go',
        llm,
        leaseTtlMs: 200,
      }),
    ).rejects.toThrow();
    seen.length = 0;
    const resumed = await run(agent, { store, sessionId: 's', llm, leaseWaitMs: 5_000 });
    expect(resumed.status).toBe('complete');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.input).toEqual({ cents: 5 });
    expect(seen[0]!.attempt).toBe(2);
    expect(seen[0]!.key).not.toBe('forged');
    const result = resumed.messages.find(
      (m) => m.role === 'tool' && m.toolCallId === 'c1' && m.content === '"charged"',
    );
    expect(result?.origin).toEqual({ via: 'handler', attempt: 2 });
  });
});
