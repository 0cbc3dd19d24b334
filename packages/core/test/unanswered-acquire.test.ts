import { describe, expect, it } from 'vitest';
import { type AgentStore, defineAgent, isAgentStoreError, run } from '../src/index.ts';
import { durableMemoryStore, unreachableLlm } from '../src/testing/index.ts';

// A lease acquire sent on a half-open connection never answers. Without a caller signal, run()
// must still settle within the lease's bounds (plus leaseWaitMs), and free a grant that lands late.

const agent = defineAgent({ name: 'acq', instructions: 'x' });
const init = { agentName: 'acq', ownerId: null, tenantId: null, state: null };

/** Acquires from the `n`-th on are held until the test lets them through (never, by default). */
function heldAcquire(inner: AgentStore, n: number) {
  let acquires = 0;
  const held: (() => void)[] = [];
  const releases: number[] = [];
  const store: AgentStore = {
    ...inner,
    acquireLease(id, input) {
      if (++acquires < n) return inner.acquireLease(id, input);
      return new Promise<void>((resolve) => held.push(resolve)).then(() => inner.acquireLease(id, input));
    },
    releaseLease(id, lease) {
      releases.push(lease.epoch);
      return inner.releaseLease(id, lease);
    },
  };
  const letThrough = () => {
    for (const go of held.splice(0)) go();
  };
  return {
    store,
    letThrough,
    releases,
    acquires: () => acquires,
  };
}

describe('an acquire that never answers', () => {
  it('run() rejects with LeaseLostError, no caller signal needed, and frees a grant that lands later', async () => {
    const inner = durableMemoryStore();
    const { store, letThrough, releases } = heldAcquire(inner, 1);
    const error = await run(agent, {
      store,
      sessionId: 's',
      message: 'hi',
      llm: unreachableLlm(),
      leaseTtlMs: 200,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentStoreError(error, 'LEASE_LOST'), String(error)).toBe(true);
    // The store grants it after all: the run frees that lease rather than block the session.
    letThrough();
    await expect.poll(() => releases.length).toBe(1);
    await expect(inner.acquireLease('s', { holder: 'next', ttlMs: 10_000, init })).resolves.toMatchObject({
      epoch: 2,
    });
  }, 10_000);

  it('one that hangs while waiting out a busy holder (leaseWaitMs) settles too', async () => {
    const inner = durableMemoryStore();
    await inner.acquireLease('s', { holder: 'other', ttlMs: 60_000, init });
    // The first acquire answers "busy"; the poll after it hangs.
    const { store, acquires } = heldAcquire(inner, 2);
    const error = await run(agent, {
      store,
      sessionId: 's',
      message: 'hi',
      llm: unreachableLlm(),
      leaseTtlMs: 200,
      leaseWaitMs: 100,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(acquires()).toBe(2);
    expect(isAgentStoreError(error, 'LEASE_LOST'), String(error)).toBe(true);
  }, 10_000);
});
