import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, isAgentStoreError, type LlmAdapter, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attacks on issue 15's run()-level guarantees. Each failing case names the broken promise.
 */

/** Handler outputs that pass `assertPlainJson` but that `JSON.stringify` turns into no JSON at all. */
const SLIPPERY: [string, () => unknown][] = [
  [
    'an object with a non-enumerable toJSON returning undefined',
    () => Object.defineProperty({ a: 1 }, 'toJSON', { value: () => undefined }),
  ],
  [
    'an object with a non-enumerable toJSON returning a function',
    () => Object.defineProperty({ a: 1 }, 'toJSON', { value: () => () => 1 }),
  ],
  [
    'an array with a non-enumerable toJSON returning undefined',
    () => Object.defineProperty([1], 'toJSON', { value: () => undefined }),
  ],
  [
    'a Proxy that hides a toJSON from Object.keys',
    () => new Proxy({ a: 1 }, { get: (t, k) => (k === 'toJSON' ? () => undefined : Reflect.get(t, k)) }),
  ],
];

describe('tool outputs that serialise to nothing', () => {
  for (const [what, make] of SLIPPERY) {
    it(`${what}: the effect is recorded as settled, the run continues, nothing is left open`, async () => {
      let ran = 0;
      const agent = defineAgent({
        name: 'attack',
        instructions: 'x',
        tools: {
          pay: tool({
            description: 'pays',
            input: z.object({}),
            handler: () => {
              ran++;
              return make() as never;
            },
          }),
        },
      });
      const store = durableMemoryStore();
      const llm = scriptedLlm([{ toolCalls: [{ name: 'pay', input: {} }] }, { text: 'done' }]);
      let thrown: unknown = null;
      try {
        await run(agent, { store, sessionId: 's', message: 'go', llm });
      } catch (error) {
        thrown = error;
      }
      expect(ran).toBe(1);
      const loaded = await store.load('s');
      const open = foldSession(loaded!.messages).toolCalls.filter((c) => c.result === null);
      // Today: the run throws INVALID_ARGUMENT "messages[0].content: must be a string" after the
      // handler ran (tool-results.ts resultMessage: JSON.stringify(value) returns undefined and is
      // used as content), and the next run records "may or may not have taken effect".
      expect(
        open.map((c) => c.call.id),
        'calls whose effect fired but stayed open',
      ).toEqual([]);
      expect(thrown, 'run() failed after the effect fired').toBeNull();
    });
  }
});

describe('tight limits through run()', () => {
  it('a store declaring maxMessagesPerAppend 1: refused before any model call, or rejections commit', async () => {
    const store = durableMemoryStore({ limits: { maxMessagesPerAppend: 1 } });
    let ran = 0;
    const agent = defineAgent({
      name: 'attack',
      instructions: 'x',
      tools: {
        pay: tool({
          description: 'pays',
          input: z.object({ i: z.number() }),
          needsApproval: true,
          handler: () => ++ran,
        }),
      },
    });
    let modelCalls = 0;
    const script = scriptedLlm([
      { toolCalls: [0, 1, 2].map((i) => ({ name: 'pay', input: { i } })) },
      { text: 'done' },
    ]);
    const llm: LlmAdapter = {
      ...script,
      generate: (request) => {
        modelCalls++;
        return script.generate(request);
      },
    };
    let asked: Awaited<ReturnType<typeof run>>;
    try {
      asked = await run(agent, { store, sessionId: 's', message: 'go', llm });
    } catch (error) {
      // The acceptable refusal: typed, before the model was paid and before any write.
      expect(isAgentStoreError(error, 'INVALID_ARGUMENT')).toBe(true);
      expect(modelCalls).toBe(0);
      expect(await store.load('s')).toBeNull();
      return;
    }
    expect(asked.status).toBe('awaiting-approval');
    const approvals = Object.fromEntries(
      asked.pendingApprovals.map((p) => [p.toolCallId, { approve: false, reason: 'no' }]),
    );
    // Today: PAYLOAD_TOO_LARGE "2 messages in one append, over this store's limit of 1" on every
    // attempt; the calls can never be rejected (conversation.ts resolveOpenCalls → planAppends keeps the
    // decision+result unit together, and nothing refused the store's limit up front).
    const done = await run(agent, { store, sessionId: 's', llm, approvals });
    expect(done.status, 'rejecting on a maxMessagesPerAppend-1 store').toBe('complete');
    expect(ran).toBe(0);
  });
});
