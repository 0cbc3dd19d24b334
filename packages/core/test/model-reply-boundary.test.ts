import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineAgent,
  foldSession,
  InvalidModelReplyError,
  isAgentStoreError,
  type LlmAdapter,
  type LlmResponse,
  run,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * A model reply is paid for before anything of it is stored. Parts the store boundary refuses
 * used to fail write #1 with INVALID_ARGUMENT or PAYLOAD_TOO_LARGE after the model call, with the
 * user's message unstored (the session could not even be resumed) — and on every retry that got
 * the same reply. A broken call is now answered with a tool-input-error the model can act on;
 * a reply that cannot be stored at all is a typed error carrying it, with the user's message kept.
 */

const LIMIT = 64 * 1024;

function agentWithLedger() {
  const ran: unknown[] = [];
  const agent = defineAgent({
    name: 'reply',
    instructions: 'x',
    tools: {
      work: tool({
        description: 'w',
        input: z.any(),
        handler: (input) => {
          ran.push(input);
          return 'ok';
        },
      }),
    },
  });
  return { agent, ran };
}

const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

const NOT_JSON: [string, unknown, string][] = [
  ['a Date', { when: new Date(0) }, 'input.when: Date is not JSON'],
  ['undefined', undefined, 'input: undefined is not JSON'],
  ['a cycle', cyclic, 'input.self: is a cycle'],
  ['a lone surrogate', { s: 'a\uD800' }, 'input.s: is not well-formed UTF-16'],
  ['a BigInt', { n: 1n }, 'input.n: BigInt is not JSON'],
];

describe('a tool call whose input breaks the JSON boundary', () => {
  for (const [what, input, named] of NOT_JSON) {
    it(`input holding ${what}: the call is answered with a tool-input-error naming it, never run; the run goes on`, async () => {
      const { agent, ran } = agentWithLedger();
      const store = durableMemoryStore();
      const llm = scriptedLlm([
        { toolCalls: [{ name: 'work', input: input as never }] },
        { toolCalls: [{ name: 'work', input: { fixed: true } }] },
        { text: 'done' },
      ]);
      const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
      expect(result.status).toBe('complete');
      expect(ran).toEqual([{ fixed: true }]); // only the retried call ran
      const loaded = (await store.load('s'))!;
      const [broken] = foldSession(loaded.messages).toolCalls;
      expect(broken!.call.input).toBeNull();
      expect(broken!.result!.kind).toBe('tool-input-error');
      expect(broken!.result!.origin).toEqual({ via: 'invalid-call', attempt: 0 });
      expect(broken!.result!.content).toContain(named);
      // The model saw the error and could retry.
      expect(llm.requests[1]!.at(-1)).toMatchObject({ role: 'tool', kind: 'tool-input-error' });
    });
  }

  it('an input too big to store with the reply is dropped and answered; the other call of the step runs', async () => {
    const { agent, ran } = agentWithLedger();
    const store = durableMemoryStore({ limits: { maxMessageBytes: LIMIT } });
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'work', input: { blob: 'x'.repeat(LIMIT) } },
          { name: 'work', input: { small: 1 } },
        ],
      },
      { text: 'done' },
    ]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(ran).toEqual([{ small: 1 }]);
    const calls = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(calls.map((c) => c.result!.kind ?? 'result')).toEqual(['tool-input-error', 'result']);
    expect(calls[0]!.result!.content).toMatch(/input is \d+ bytes of JSON, too big to store/);
  });

  it('a tool name holding a lone surrogate is stored well-formed and answered, not run', async () => {
    const { agent, ran } = agentWithLedger();
    const store = durableMemoryStore();
    const llm = scriptedLlm([{ toolCalls: [{ name: 'work\uD800', input: {} }] }, { text: 'done' }]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(ran).toEqual([]);
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.call.name).toBe('work\uFFFD');
    expect(call!.result!.kind).toBe('tool-input-error');
  });
});

describe('reply text', () => {
  it('a lone surrogate becomes U+FFFD, as a UTF-8 store would make it; the answer is stored', async () => {
    const { agent } = agentWithLedger();
    const store = durableMemoryStore();
    const result = await run(agent, {
      store,
      sessionId: 's',
      message: 'go',
      llm: scriptedLlm([{ text: 'a\uD800b' }]),
    });
    expect(result).toMatchObject({ status: 'complete', response: 'a\uFFFDb' });
    expect((await store.load('s'))!.messages.at(-1)!.content).toBe('a\uFFFDb');
  });
});

/** A model adapter that answers `reply` verbatim, whatever its shape. */
const answering = (reply: unknown): LlmAdapter => ({ generate: async () => reply as LlmResponse });

describe('a reply that cannot be stored at all', () => {
  const cases: [string, unknown, string, { maxMessageBytes?: number }][] = [
    ['text that is not a string', { text: 42, toolCalls: [] }, 'text', {}],
    ['toolCalls that is not an array', { text: '', toolCalls: 'work' }, 'toolCalls', {}],
    [
      'a tool name that is not a string',
      { text: '', toolCalls: [{ name: 7, input: {} }] },
      'toolCalls[0].name',
      {},
    ],
    [
      'text over the message limit',
      { text: 'x'.repeat(LIMIT + 1), toolCalls: [] },
      'text',
      { maxMessageBytes: LIMIT },
    ],
  ];
  for (const [what, reply, field, limits] of cases) {
    it(`${what}: INVALID_MODEL_REPLY naming ${field}, carrying the reply; the user's message is kept and a resume completes`, async () => {
      const { agent } = agentWithLedger();
      const store = durableMemoryStore({ limits });
      const error = await run(agent, { store, sessionId: 's', message: 'go', llm: answering(reply) }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidModelReplyError);
      expect(isAgentStoreError(error, 'INVALID_MODEL_REPLY')).toBe(true);
      expect((error as InvalidModelReplyError).field).toBe(field);
      expect((error as InvalidModelReplyError).reply).toBe(reply);
      expect((await store.load('s'))!.messages.map((m) => m.content)).toEqual(['go']);
      // No message needed: the session asks the model again.
      const resumed = await run(agent, { store, sessionId: 's', llm: scriptedLlm([{ text: 'done' }]) });
      expect(resumed).toMatchObject({ status: 'complete', response: 'done' });
    });
  }
});

describe('a broken call whose reason is itself huge', () => {
  it('a Date under an 80 KB key: answered with a tool-input-error (clipped reason), never the output-error fallback', async () => {
    const { agent, ran } = agentWithLedger();
    const store = durableMemoryStore({ limits: { maxMessageBytes: LIMIT } });
    const key = 'k-'.repeat(40_000);
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'work', input: { [key]: new Date(0) } as never }] },
      { text: 'done' },
    ]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(ran).toEqual([]);
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.call.input).toBeNull();
    expect(call!.result!.kind).toBe('tool-input-error');
    const error = JSON.parse(call!.result!.content).error as string;
    expect(error).toMatch(
      /^Tool "work" did not run: its input is not plain JSON \(input\["k-k-.*….*-k-"\]: Date is not JSON\)/,
    );
    expect(error.length).toBeLessThan(1_200);
  });
});

describe('the usage of a refused reply', () => {
  it('is carried on InvalidModelReplyError: on a resume with no new message nothing is stored to record it', async () => {
    const { agent } = agentWithLedger();
    const store = durableMemoryStore();
    await run(agent, { store, sessionId: 's', message: 'go', llm: scriptedLlm([{ text: 'first' }]) });
    const refusing: LlmAdapter = {
      generate: async () =>
        ({
          text: 7,
          toolCalls: [],
          usage: { inputTokens: 1000, outputTokens: 200 },
        }) as unknown as LlmResponse,
    };
    // Refused once with a new message (stored, so the session waits on the model), then resumed.
    await run(agent, { store, sessionId: 's', message: 'again', llm: refusing }).catch(() => undefined);
    const error = await run(agent, { store, sessionId: 's', llm: refusing }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidModelReplyError);
    expect((error as InvalidModelReplyError).usage).toEqual({ inputTokens: 1000, outputTokens: 200 });
  });
});
