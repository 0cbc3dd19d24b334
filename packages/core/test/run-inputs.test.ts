import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentStore, defineAgent, type RunOptions, run, tool } from '../src/index.ts';
import { durableMemoryStore, unreachableLlm } from '../src/testing/index.ts';

/** Counts every store call: a refused run must not reach the store at all. */
function recordingStore(limits?: Partial<AgentStore['limits']>) {
  const store = durableMemoryStore(limits ? { limits } : {});
  const calls: string[] = [];
  const wrapped = { ...store };
  for (const key of [
    'load',
    'append',
    'acquireLease',
    'renewLease',
    'releaseLease',
    'listSessions',
    'deleteSession',
  ] as const) {
    const original = store[key] as (...args: unknown[]) => Promise<unknown>;
    (wrapped as Record<string, unknown>)[key] = (...args: unknown[]) => {
      calls.push(key);
      return original(...args);
    };
  }
  return { store: wrapped as AgentStore, calls };
}

const agent = defineAgent({
  name: 'checker',
  instructions: 'x',
  tools: { echo: tool({ description: 'e', input: z.object({}), handler: () => 1 }) },
});

describe('run() checks its own inputs before the lease and the model', () => {
  it('refuses each bad input with a typed error naming it; no store call, no model call', async () => {
    const cases: [string, Partial<RunOptions>, string, string?][] = [
      ['empty messageId', { messageId: '' }, 'INVALID_ARGUMENT', 'messageId'],
      ['messageId with a lone surrogate', { messageId: 'm\uD800' }, 'INVALID_ARGUMENT', 'messageId'],
      ['non-string message', { message: 42 as never }, 'INVALID_ARGUMENT', 'message'],
      ['message with a lone surrogate', { message: 'hi \uDFFF' }, 'INVALID_ARGUMENT', 'message'],
      ['5 MiB message', { message: 'x'.repeat(5 * 1024 * 1024) }, 'PAYLOAD_TOO_LARGE'],
      ['sessionId with a lone surrogate', { sessionId: 's\uDBFF' }, 'INVALID_ARGUMENT', 'sessionId'],
      ['ownerId with a lone surrogate', { ownerId: 'user-\uD800' }, 'INVALID_ARGUMENT', 'ownerId'],
      ['empty tenantId', { tenantId: '' }, 'INVALID_ARGUMENT', 'tenantId'],
      ['NaN leaseWaitMs', { leaseWaitMs: Number.NaN }, 'INVALID_ARGUMENT', 'leaseWaitMs'],
      ['negative leaseWaitMs', { leaseWaitMs: -1 }, 'INVALID_ARGUMENT', 'leaseWaitMs'],
      ['leaseWaitMs past a timer', { leaseWaitMs: 2 ** 31 }, 'INVALID_ARGUMENT', 'leaseWaitMs'],
      ['NaN leaseTtlMs', { leaseTtlMs: Number.NaN }, 'INVALID_ARGUMENT', 'leaseTtlMs'],
      ['fractional leaseTtlMs', { leaseTtlMs: 1.5 }, 'INVALID_ARGUMENT', 'leaseTtlMs'],
      ['approvals as an array', { approvals: [] as never }, 'INVALID_ARGUMENT', 'approvals'],
      [
        'a decision without approve',
        { approvals: { c1: {} as never } },
        'INVALID_ARGUMENT',
        'approvals["c1"].approve',
      ],
      [
        'a decision with an unknown field',
        { approvals: { c1: { approve: true, why: 1 } as never } },
        'INVALID_ARGUMENT',
        'approvals["c1"].why',
      ],
      [
        'a rejection reason that is not a string',
        { approvals: { c1: { approve: false, reason: 7 as never } } },
        'INVALID_ARGUMENT',
        'approvals["c1"].reason',
      ],
      ['an llm without generate()', { llm: {} as never }, 'INVALID_ARGUMENT', 'llm'],
    ];
    for (const [what, fields, code, argument] of cases) {
      const { store, calls } = recordingStore({ maxMessageBytes: 1024 * 1024 });
      const options = {
        store,
        sessionId: 's1',
        message: 'hello',
        llm: unreachableLlm(),
        ...fields,
      } as RunOptions;
      const error = await run(agent, options).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, what).toMatchObject({ code, ...(argument ? { argument } : {}) });
      expect(calls, what).toEqual([]);
    }
  });

  it('refuses an agent name the stores would refuse, before any write', async () => {
    const { store, calls } = recordingStore();
    const bad = defineAgent({ name: 'agent-\uD800', instructions: 'x' });
    await expect(
      run(bad, { store, sessionId: 's', message: 'hi', llm: unreachableLlm() }),
    ).rejects.toMatchObject({
      argument: 'agent.name',
    });
    expect(calls).toEqual([]);
  });
});
