import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentStore, defineAgent, isAgentStoreError, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack: a full partition between the worker and the database (a half-open connection: nothing
 * errors, nothing answers), not only of the renewals. The keeper stops the run at its local
 * deadline — but does run() itself ever settle, and can its caller cancel it?
 */

/** Every call through this wrapper hangs once `partitioned` is set (calls already answered stay answered). */
function partitionable(store: AgentStore) {
  const state = { partitioned: false, hung: [] as string[] };
  const hang = <T>(op: string, call: () => Promise<T>): Promise<T> => {
    if (!state.partitioned) return call();
    state.hung.push(op);
    return new Promise<T>(() => {});
  };
  const wrapped: AgentStore = {
    durable: store.durable,
    limits: store.limits,
    load: (id, options) => hang('load', () => store.load(id, options)),
    append: (id, input) => hang('append', () => store.append(id, input)),
    acquireLease: (id, input) => hang('acquireLease', () => store.acquireLease(id, input)),
    renewLease: (id, input) => hang('renewLease', () => store.renewLease(id, input)),
    releaseLease: (id, input) => hang('releaseLease', () => store.releaseLease(id, input)),
    listSessions: (input) => hang('listSessions', () => store.listSessions(input)),
    deleteSession: (id) => hang('deleteSession', () => store.deleteSession(id)),
    deleteIdleSessions: (input) => hang('deleteIdleSessions', () => store.deleteIdleSessions(input)),
    close: () => store.close(),
  };
  return { store: wrapped, state };
}

/** Lets every pending promise job and timer that is already due run. */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a full partition (every store call hangs)', () => {
  it('a run whose tool-result append hangs settles with LeaseLostError once its lease deadline passes', async () => {
    const { store, state } = partitionable(durableMemoryStore());
    let leaseSignal: AbortSignal | undefined;
    const agent = defineAgent({
      name: 'pay',
      instructions: '',
      tools: {
        charge: tool({
          description: 'charges',
          input: z.object({}),
          handler: (_input, ctx) => {
            leaseSignal = ctx.signal;
            // The effect happened; the partition starts before its result is committed.
            state.partitioned = true;
            return 'charged';
          },
        }),
      },
    });
    let settled: unknown = 'pending';
    const outcome = run(agent, {
      store,
      sessionId: 'partition',
      message: 'pay',
      llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
      leaseTtlMs: 200,
    }).then(
      (result) => result,
      (error: unknown) => error,
    );
    void outcome.then((value) => {
      settled = value;
    });
    // Barrier: the keeper's local deadline passed and the run was told it lost the lease.
    await new Promise<void>((resolve) => {
      const wait = () => (leaseSignal?.aborted ? resolve() : setTimeout(wait, 10));
      wait();
    });
    expect(state.hung).toContain('append');
    await turns(5);
    // The run knows it lost the lease; it must not sit forever on an append that cannot answer.
    expect(settled === 'pending' ? 'still pending' : 'settled').toBe('settled');
    expect(isAgentStoreError(settled, 'LEASE_LOST')).toBe(true);
  });

  it("a run whose acquireLease hangs ends when the caller's signal aborts", async () => {
    const { store, state } = partitionable(durableMemoryStore());
    state.partitioned = true;
    const controller = new AbortController();
    let settled: unknown = 'pending';
    void run(defineAgent({ name: 'chat', instructions: '' }), {
      store,
      sessionId: 'hung-acquire',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      signal: controller.signal,
    }).then(
      (result) => {
        settled = result;
      },
      (error: unknown) => {
        settled = error;
      },
    );
    await turns(2);
    expect(state.hung).toEqual(['acquireLease']);
    controller.abort(new Error('caller gave up'));
    await turns(5);
    expect(settled === 'pending' ? 'still pending' : 'settled').toBe('settled');
    expect((settled as Error).message).toBe('caller gave up');
  });

  it('a grant that answers after the caller gave up is released, not left to block the session for a TTL', async () => {
    const store = durableMemoryStore();
    let answer!: () => void;
    const late = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const slow: AgentStore = {
      ...store,
      acquireLease: async (id, input) => {
        await late;
        return store.acquireLease(id, input);
      },
    };
    const controller = new AbortController();
    const outcome = run(defineAgent({ name: 'chat', instructions: '' }), {
      store: slow,
      sessionId: 'late-grant',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseTtlMs: 600_000,
      signal: controller.signal,
    }).catch((error: unknown) => error);
    controller.abort(new Error('caller gave up'));
    expect(((await outcome) as Error).message).toBe('caller gave up');
    answer(); // the store grants the abandoned acquire after all
    await turns(5);
    // Nobody renews or uses that lease: it must be freed, not left for 10 minutes.
    expect((await store.load('late-grant'))?.session.lease).toBeNull();
  });
});
