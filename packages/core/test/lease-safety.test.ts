import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  type AgentStoreError,
  defineAgent,
  InvalidArgumentError,
  isAgentStoreError,
  LeaseLostError,
  run,
  tool,
} from '../src/index.ts';
import { keepLeaseAlive } from '../src/loop/lease-keeper.ts';
import { leaseSafetyMarginMs } from '../src/store/lease-rules.ts';
import { durableMemoryStore, faultyStore, renewFaults, scriptedLlm } from '../src/testing/index.ts';

const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };

/** A store whose renewals the test answers by hand, to place each answer exactly in time. */
function manualRenewals(store: AgentStore) {
  const pending: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const wrapped: AgentStore = {
    ...store,
    renewLease: () =>
      new Promise<{ expiresAt: string }>((resolve, reject) => {
        pending.push({ resolve: () => resolve({ expiresAt: '' }), reject });
      }),
  };
  return { store: wrapped, pending };
}

describe('the lease keeper (holder side), on a fake clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const start = (store: AgentStore, ttlMs: number) => {
    const lost: AgentStoreError[] = [];
    const keeper = keepLeaseAlive({
      store,
      sessionId: 's',
      lease: { holder: 'h', epoch: 1 },
      ttlMs,
      sentAt: Date.now(),
      now: () => Date.now(),
      onLost: (error) => lost.push(error),
    });
    return { keeper, lost };
  };

  it('a hung renewal never extends the lease: the run is aborted at send + ttl − margin', async () => {
    vi.useFakeTimers();
    const ttl = 3_000;
    const { store, pending } = manualRenewals(durableMemoryStore());
    const { keeper, lost } = start(store, ttl);
    const deadline = ttl - leaseSafetyMarginMs(ttl);
    await vi.advanceTimersByTimeAsync(deadline - 1);
    expect(pending.length).toBeGreaterThanOrEqual(2); // renewals were sent, none answered
    expect(lost).toEqual([]);
    expect(() => keeper.assertHeld()).not.toThrow();
    await vi.advanceTimersByTimeAsync(1);
    expect(lost).toHaveLength(1);
    expect(() => keeper.assertHeld()).toThrow(LeaseLostError);
    keeper.stop();
  });

  it('assertHeld refuses at the deadline even when the abort timer has not fired yet (a blocked event loop)', () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const { store } = manualRenewals(durableMemoryStore());
    const { keeper, lost } = start(store, ttl);
    // The clock moves but no timer runs, as when the event loop was blocked past the deadline.
    vi.setSystemTime(Date.now() + ttl - leaseSafetyMarginMs(ttl));
    expect(() => keeper.assertHeld()).toThrow(LeaseLostError);
    expect(lost).toHaveLength(1);
    keeper.stop();
  });

  it('an answered renewal moves the deadline to its own send time + ttl − margin, not its answer time', async () => {
    vi.useFakeTimers();
    const ttl = 4_000;
    const margin = leaseSafetyMarginMs(ttl);
    const { store, pending } = manualRenewals(durableMemoryStore());
    const { keeper, lost } = start(store, ttl);
    expect(margin).toBe(800);
    await vi.advanceTimersByTimeAsync(1_000); // renewal #1 sent at t = 1000
    expect(pending).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(999); // t = 1999: renewal #2 not yet sent
    pending[0]!.resolve(); // answered late; later renewals (t = 2000, 3000, 4000) hang
    await vi.advanceTimersByTimeAsync(1);
    // Valid until 1000 + ttl − margin = 4200, counted from the send, not from the answer.
    await vi.advanceTimersByTimeAsync(2_199); // t = 4199
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lost).toHaveLength(1);
    keeper.stop();
  });

  it('an overdue renew timer that runs after the deadline (a blocked event loop) expires instead of renewing', async () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const store = renewFaults(durableMemoryStore(), 'hang');
    const { keeper, lost } = start(store, ttl);
    // The loop was blocked past the deadline: the clock moved, no timer ran.
    vi.setSystemTime(Date.now() + ttl);
    // Then one turn: the renew timer, due first, runs before the deadline timer.
    await vi.advanceTimersByTimeAsync(ttl / 4);
    expect(store.renewCalls).toBe(0);
    expect(lost).toHaveLength(1);
    expect(() => keeper.assertHeld()).toThrow(LeaseLostError);
    keeper.stop();
  });

  it('a renewal answered after the deadline does not revive the lease', async () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const { store, pending } = manualRenewals(durableMemoryStore());
    const { keeper, lost } = start(store, ttl);
    await vi.advanceTimersByTimeAsync(ttl);
    expect(lost).toHaveLength(1);
    for (const p of pending) p.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(() => keeper.assertHeld()).toThrow(LeaseLostError);
    keeper.stop();
  });

  it('failing renewals abort at the deadline, not a renewal interval later, and keep the cause', async () => {
    vi.useFakeTimers();
    const ttl = 2_000;
    const store = renewFaults(durableMemoryStore(), 'fail');
    const { keeper, lost } = start(store, ttl);
    await vi.advanceTimersByTimeAsync(ttl - leaseSafetyMarginMs(ttl));
    expect(store.renewCalls).toBeGreaterThanOrEqual(3);
    expect(lost).toHaveLength(1);
    expect((lost[0]!.cause as Error).name).toBe('SimulatedNetworkError');
    keeper.stop();
  });

  it('a store that says the lease is gone aborts at once', async () => {
    vi.useFakeTimers();
    const store = durableMemoryStore(); // no such lease: renewLease answers LEASE_LOST
    const { keeper, lost } = start(store, 4_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lost).toHaveLength(1);
    expect(isAgentStoreError(lost[0], 'LEASE_LOST')).toBe(true);
    keeper.stop();
  });

  it('a 24 h TTL arms no timer beyond what Node can hold (no 1 ms renewal storm)', async () => {
    vi.useFakeTimers();
    const store = renewFaults(durableMemoryStore(), 'hang');
    const { keeper } = start(store, 24 * 60 * 60 * 1000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.renewCalls).toBe(0);
    await vi.advanceTimersByTimeAsync(6 * 60 * 60 * 1000);
    expect(store.renewCalls).toBe(1);
    keeper.stop();
  });
});

describe('run() under lease faults (real timers, deterministic order)', () => {
  it('a partitioned holder’s ctx.signal aborts before the store lets anyone take over, so a handler that honours it never fires late', async () => {
    const store = durableMemoryStore();
    const partitioned = renewFaults(store, 'hang');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let signal: AbortSignal | undefined;
    const fired: string[] = [];
    const agent = defineAgent({
      name: 'pay',
      instructions: '',
      tools: {
        charge: tool({
          description: 'charges',
          input: z.object({}),
          handler: async (_input, ctx) => {
            signal = ctx.signal;
            await gate; // the call to the payment API is slow; the database is unreachable
            if (!ctx.signal.aborted) fired.push(ctx.idempotencyKey);
            return 'ok';
          },
        }),
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]);
    const outcome = run(agent, {
      store: partitioned,
      sessionId: 'p',
      message: 'go',
      llm,
      leaseTtlMs: 300,
    }).catch((error: unknown) => error);
    // Poll until the store itself lets another worker take the lease.
    for (;;) {
      const taken = await store
        .acquireLease('p', { holder: 'successor', ttlMs: 10_000, init: { ...init, agentName: 'pay' } })
        .then(() => true)
        .catch(() => false);
      if (taken) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The moment another worker may take over, the old holder has already been told to stop. (One
    // timer turn first: on a blocked event loop the probe's and the deadline's timers come due
    // together, and the probe's may run first; the holder could not run anything meanwhile either.)
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signal?.aborted).toBe(true);
    expect(isAgentStoreError(signal?.reason, 'LEASE_LOST')).toBe(true);
    release();
    expect(isAgentStoreError(await outcome, 'LEASE_LOST')).toBe(true);
    expect(fired).toEqual([]);
  });

  it('a lost answer to acquireLease is retried with the same holder; the run completes on the re-grant', async () => {
    const store = durableMemoryStore();
    const flaky = faultyStore(store, { op: 'acquireLease', call: 1, when: 'after', effect: 'ack-lost' });
    const chat = defineAgent({ name: 'chat', instructions: '' });
    const result = await run(chat, {
      store: flaky,
      sessionId: 'ack',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseTtlMs: 60_000,
    });
    expect(result.status).toBe('complete');
    expect(flaky.calls.acquireLease).toBe(2);
    // The run released its (second) grant: the session is free at once, not after 60 s.
    expect((await store.load('ack'))?.session.lease).toBeNull();
  });

  it('a queued run takes a released lease long before the old expiry, polling with backoff', async () => {
    const store = durableMemoryStore();
    const { epoch } = await store.acquireLease('q', {
      holder: 'first',
      ttlMs: 600_000,
      init: { ...init, agentName: 'chat' },
    });
    let acquires = 0;
    const counting: AgentStore = {
      ...store,
      acquireLease: (id, input) => {
        acquires += 1;
        return store.acquireLease(id, input);
      },
    };
    const chat = defineAgent({ name: 'chat', instructions: '' });
    const waiting = run(chat, {
      store: counting,
      sessionId: 'q',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseWaitMs: 60_000,
    });
    // Wait (by condition, not by time) until the waiter has polled a few times.
    const started = performance.now();
    while (acquires < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    const elapsedMs = performance.now() - started;
    const before = acquires;
    await store.releaseLease('q', { holder: 'first', epoch });
    // Had it slept until the expiry it was told (10 min), leaseWaitMs (1 min) would have run out.
    expect((await waiting).status).toBe('complete');
    // Backoff from 25 ms: never more than one poll per ~20 ms, however busy the machine (a loaded
    // machine only makes polls rarer), so this is a bound, not a race.
    expect(before).toBeLessThanOrEqual(2 + elapsedMs / 20);
  });

  it.each([
    ['0', 0],
    ['5 (below the minimum)', 5],
    ['1.5', 1.5],
    ['3e14 (a year past 9999)', 3e14],
    ['MAX_SAFE_INTEGER', Number.MAX_SAFE_INTEGER],
    ['24 h + 1 ms', 86_400_001],
    ['NaN', Number.NaN],
  ])('refuses leaseTtlMs %s with InvalidArgumentError before any store call', async (_, leaseTtlMs) => {
    const store = faultyStore(durableMemoryStore(), {
      op: 'load',
      call: 99,
      when: 'before',
      effect: 'crash',
    });
    const error = await run(defineAgent({ name: 'c', instructions: '' }), {
      store,
      sessionId: 'ttl',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseTtlMs,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe('leaseTtlMs');
    expect(store.calls.acquireLease).toBe(0);
  });

  it('stores refuse out-of-range ttlMs and stay loadable', async () => {
    const store = durableMemoryStore();
    for (const ttlMs of [3e14, Number.MAX_SAFE_INTEGER, 86_400_001, 9]) {
      await expect(store.acquireLease('b', { holder: 'h', ttlMs, init })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    expect(await store.load('b')).toBeNull();
    const { epoch } = await store.acquireLease('b', { holder: 'h', ttlMs: 86_400_000, init });
    await expect(store.renewLease('b', { holder: 'h', epoch, ttlMs: 3e14 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect((await store.load('b'))?.session.lease?.epoch).toBe(epoch);
  });
});

describe('a handler that blocks the event loop past the deadline', () => {
  it('no renewal is sent after the local deadline, though the overdue renew timer runs first', async () => {
    const inner = durableMemoryStore();
    const ttl = 200;
    let acquiredAt = 0;
    const renewSentAt: number[] = [];
    const store: AgentStore = {
      ...inner,
      acquireLease: (id, input) => {
        acquiredAt = performance.now();
        return inner.acquireLease(id, input);
      },
      renewLease: (id, input) => {
        renewSentAt.push(performance.now() - acquiredAt);
        return inner.renewLease(id, input);
      },
    };
    const agent = defineAgent({
      name: 'blocks',
      instructions: '',
      tools: {
        block: tool({
          description: 'blocks the event loop for two TTLs',
          input: z.object({}),
          handler: async () => {
            const until = performance.now() + 2 * ttl;
            while (performance.now() < until) {
              // blocked
            }
            // One macrotask turn: the overdue renew timer runs before the deadline timer.
            await new Promise((resolve) => setTimeout(resolve, 0));
            return 'ok';
          },
        }),
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ id: 'x', name: 'block', input: {} }] }, { text: 'done' }]);
    const outcome = await run(agent, { store, sessionId: 'b', message: 'go', llm, leaseTtlMs: ttl }).catch(
      (error: unknown) => error,
    );
    expect(isAgentStoreError(outcome, 'LEASE_LOST')).toBe(true);
    // acquiredAt is taken just before the acquire is sent: later than the run's own measure, so
    // this bound is, if anything, generous.
    expect(renewSentAt.filter((at) => at > ttl - leaseSafetyMarginMs(ttl))).toEqual([]);
  });
});
