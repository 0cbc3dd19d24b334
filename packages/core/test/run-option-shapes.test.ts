import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentStore, defineAgent, foldSession, type RunOptions, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm, unreachableLlm } from '../src/testing/index.ts';

/** Counts every store call: a refused run must not reach the store at all. */
function countingStore() {
  const store = durableMemoryStore();
  const calls: string[] = [];
  const wrapped: AgentStore = { ...store };
  for (const key of ['load', 'append', 'acquireLease', 'renewLease', 'releaseLease'] as const) {
    const original = store[key] as (...args: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[key] = (...args: unknown[]) => {
      calls.push(key);
      return original(...args);
    };
  }
  return { store: wrapped, calls };
}

const pay = tool({ description: 'pays', input: z.object({}), needsApproval: true, handler: () => 'paid' });
const agent = defineAgent({ name: 'payer', instructions: 'x', tools: { pay } });

describe('run() checks the shape of its object options before any write or model call', () => {
  const cases: [string, Partial<RunOptions>, string][] = [
    ['a tool that is a number', { tools: { pay: 42 as never } }, 'tools["pay"]'],
    ['a tool that is null', { tools: { pay: null as never } }, 'tools["pay"]'],
    ['tools that are not an object', { tools: 'pay' as never }, 'tools'],
    ['a tool without a handler', { tools: { pay: { ...pay, handler: 1 } as never } }, 'tools["pay"].handler'],
    [
      'a tool whose input is no schema',
      { tools: { pay: { ...pay, input: {} } as never } },
      'tools["pay"].input',
    ],
    [
      'a tool whose needsApproval is a string',
      { tools: { pay: { ...pay, needsApproval: 'yes' } as never } },
      'tools["pay"].needsApproval',
    ],
    ['a signal that is a plain object', { signal: {} as never }, 'signal'],
    ['a signal that is a string', { signal: 'stop' as never }, 'signal'],
    ['a store that is an empty object', { store: {} as never }, 'store.limits'],
    [
      'a store without append',
      { store: { ...durableMemoryStore(), append: undefined } as never },
      'store.append',
    ],
  ];
  for (const [what, fields, argument] of cases) {
    it(`${what}: InvalidArgumentError naming ${argument}`, async () => {
      const { store, calls } = countingStore();
      const error = await run(agent, {
        store,
        sessionId: 's',
        message: 'hi',
        llm: unreachableLlm(),
        ...fields,
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument });
      expect(calls).toEqual([]);
    });
  }

  it('an approving run given a tool that is not one is refused: the approval is not consumed', async () => {
    const { store, calls } = countingStore();
    const llm = scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'pay', input: {} }] }, { text: 'done' }]);
    const paused = await run(agent, { store, sessionId: 's', message: 'pay', llm });
    expect(paused.status).toBe('awaiting-approval');
    calls.length = 0;
    await expect(
      run(agent, {
        store,
        sessionId: 's',
        llm: unreachableLlm(),
        tools: { pay: 42 as never },
        approvals: { c1: { approve: true } },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'tools["pay"]' });
    expect(calls).toEqual([]);
    const loaded = await store.load('s');
    expect(foldSession(loaded?.messages ?? []).status).toBe('awaiting-approval');
  });
});
