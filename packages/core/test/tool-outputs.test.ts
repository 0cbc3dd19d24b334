import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, run, tool } from '../src/index.ts';
import {
  durableMemoryStore,
  faultyStore,
  isSimulatedCrash,
  scriptedLlm,
  unreachableLlm,
} from '../src/testing/index.ts';

const cyclic = (): unknown => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};

/** Outputs a handler can return that no store can hold as JSON. */
const UNSTORABLE: [string, () => unknown][] = [
  ['a function', () => () => 1],
  ['a Symbol', () => Symbol('s')],
  ['a BigInt', () => 10n],
  ['a cycle', cyclic],
  ['toJSON() returning undefined', () => ({ toJSON: () => undefined })],
  ['a Date', () => ({ when: new Date(0) })],
  ['a Map', () => new Map([[1, 2]])],
  ['NaN', () => ({ n: Number.NaN })],
];

describe('tool and reconcile outputs go through the boundary', () => {
  it('an unstorable handler output becomes a recorded tool-output-error and the run continues', async () => {
    const ran: string[] = [];
    const tools = Object.fromEntries(
      UNSTORABLE.map(([what, make], i) => [
        `t${i}`,
        tool({
          description: what,
          input: z.object({}),
          handler: (_input, ctx) => {
            ran.push(ctx.toolCallId);
            return make() as never;
          },
        }),
      ]),
    );
    const agent = defineAgent({ name: 'outputs', instructions: 'x', tools });
    const store = durableMemoryStore();
    const llm = scriptedLlm([
      { toolCalls: UNSTORABLE.map((_, i) => ({ name: `t${i}`, input: {} })) },
      { text: 'done' },
    ]);
    const result = await run(agent, { store, sessionId: 'out', message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(ran).toHaveLength(UNSTORABLE.length);
    const loaded = await store.load('out');
    const results = loaded!.messages.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(UNSTORABLE.length);
    for (const r of results) {
      expect(r.kind).toBe('tool-output-error');
      expect(r.origin).toEqual({ via: 'handler', attempt: 1 });
      expect(JSON.parse(r.content).error).toMatch(/ran, but its output cannot be stored as JSON/);
    }
    expect(foldSession(loaded!.messages).status).toBe('complete');
    expect((await run(agent, { store, sessionId: 'out', llm: unreachableLlm() })).status).toBe('complete');
  });

  it('reconcile outputs are schema-checked and encoded the same way; a malformed answer is a durability error', async () => {
    const answers: Record<string, unknown> = {
      bigint: { happened: true, output: { id: 10n } },
      schema: { happened: true, output: { id: 'not a number' } },
      good: { happened: true, output: { id: 7 } },
      malformed: { yes: true },
    };
    const ran: string[] = [];
    const agent = defineAgent({
      name: 'reconciles',
      instructions: 'x',
      tools: {
        charge: tool({
          description: 'c',
          input: z.object({ case: z.string() }),
          output: z.object({ id: z.number() }),
          handler: ({ case: which }) => {
            ran.push(which);
            return { id: 1 };
          },
          reconcile: ({ case: which }) => answers[which] as never,
        }),
      },
    });
    const store = durableMemoryStore();
    const cases = Object.keys(answers);
    const llm = scriptedLlm([
      { toolCalls: cases.map((c) => ({ name: 'charge', input: { case: c } })) },
      { text: 'done' },
    ]);
    // The process dies before any result is written: every call is left open.
    const crashing = faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' });
    const crashed = await run(agent, {
      store: crashing,
      sessionId: 'rec',
      message: 'go',
      llm,
      leaseTtlMs: 300,
    }).catch((e: unknown) => e);
    expect(isSimulatedCrash(crashed)).toBe(true);
    ran.length = 0;
    const resumed = await run(agent, { store, sessionId: 'rec', llm, leaseWaitMs: 5000 });
    expect(resumed.status).toBe('complete');
    expect(ran).toEqual([]);
    const byCase = new Map<string, { kind?: string; origin?: unknown; content: string }>();
    const loaded = await store.load('rec');
    const calls = foldSession(loaded!.messages).toolCalls;
    for (const { call, result } of calls) byCase.set((call.input as { case: string }).case, result!);
    expect(byCase.get('good')).toMatchObject({
      content: '{"id":7}',
      origin: { via: 'reconciled', attempt: 2 },
    });
    expect(byCase.get('good')?.kind).toBeUndefined();
    expect(byCase.get('bigint')).toMatchObject({ kind: 'tool-output-error', origin: { via: 'reconciled' } });
    expect(byCase.get('schema')).toMatchObject({ kind: 'tool-output-error', origin: { via: 'reconciled' } });
    expect(byCase.get('malformed')).toMatchObject({
      kind: 'tool-durability-error',
      origin: { via: 'durability-error', attempt: 0 },
    });
  });

  it('records how every result was obtained', async () => {
    const agent = defineAgent({
      name: 'origins',
      instructions: 'x',
      tools: {
        ok: tool({ description: 'o', input: z.object({}), handler: () => 'fine' }),
        boom: tool({
          description: 'b',
          input: z.object({}),
          handler: () => {
            throw new Error('boom');
          },
        }),
        typed: tool({ description: 't', input: z.object({ n: z.number() }), handler: () => 1 }),
      },
    });
    const store = durableMemoryStore();
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'ok', input: {} },
          { name: 'boom', input: {} },
          { name: 'typed', input: { n: 'x' } },
          { name: 'missing', input: {} },
        ],
      },
      { text: 'done' },
    ]);
    await run(agent, { store, sessionId: 'orig', message: 'go', llm });
    const results = (await store.load('orig'))!.messages.filter((m) => m.role === 'tool');
    const byTool = Object.fromEntries(results.map((m) => [m.toolName, [m.kind ?? null, m.origin]]));
    expect(byTool).toEqual({
      ok: [null, { via: 'handler', attempt: 1 }],
      boom: ['tool-error', { via: 'handler', attempt: 1 }],
      typed: ['tool-input-error', { via: 'invalid-call', attempt: 0 }],
      missing: ['tool-error', { via: 'invalid-call', attempt: 0 }],
    });
  });
});

describe('an error result too big to store', () => {
  it('a handler error whose message is over the limit is stored as a tool-error saying so, not as an output error', async () => {
    const store = durableMemoryStore({ limits: { maxMessageBytes: 16 * 1024 } });
    const agent = defineAgent({
      name: 'loud',
      instructions: '',
      tools: {
        fail: tool({
          description: 'fails loudly',
          input: z.object({}),
          handler: () => {
            throw new Error('x'.repeat(32 * 1024));
          },
        }),
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ id: 'f', name: 'fail', input: {} }] }, { text: 'done' }]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.result!.kind).toBe('tool-error');
    expect(JSON.parse(call!.result!.content).error).toMatch(
      /^Tool fail ran, but its output is \d+ bytes, over the store's limit/,
    );
  });
});
