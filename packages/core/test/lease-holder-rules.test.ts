import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  AppendOutcomeUnknownError,
  defineAgent,
  isAgentStoreError,
  LeaseLostError,
  run,
  tool,
} from '../src/index.ts';
import { AMBIGUOUS_ACQUIRE_RETRIES } from '../src/loop/lease-acquire.ts';
import { keepLeaseAlive } from '../src/loop/lease-keeper.ts';
import { leaseSafetyMarginMs } from '../src/store/lease-rules.ts';
import { durableMemoryStore, SimulatedNetworkError, scriptedLlm } from '../src/testing/index.ts';

// The holder's rules that no other test pinned: a renewal refused as lost after the first commit
// stops the run; a watched call that fails fast leaves no give-up timer behind; the default TTL;
// how often an acquire with a lost answer is repeated.

afterEach(() => {
  vi.useRealTimers();
});

describe('a renewal refused as lost once the run has committed', () => {
  it('aborts ctx.signal with LeaseLostError: a handler checking it before its effect does not fire', async () => {
    const inner = durableMemoryStore();
    let refuse = false;
    let refused!: () => void;
    const renewalRefused = new Promise<void>((resolve) => {
      refused = resolve;
    });
    const store: AgentStore = {
      ...inner,
      renewLease(id, input) {
        if (!refuse) return inner.renewLease(id, input);
        setTimeout(refused, 0); // after the keeper has seen the refusal
        return Promise.reject(
          new LeaseLostError({ sessionId: id, holder: input.holder, epoch: input.epoch }),
        );
      },
    };
    let fired = 0;
    let seen: AbortSignal | undefined;
    const charge = tool({
      description: 'charges',
      input: z.object({}),
      handler: async (_input, ctx) => {
        // Write #1 (the assistant's call) has committed: the run is not releasing anything.
        refuse = true;
        await renewalRefused;
        seen = ctx.signal;
        if (ctx.signal.aborted) throw ctx.signal.reason;
        fired += 1;
        return 'charged';
      },
    });
    const error = await run(defineAgent({ name: 'pay', instructions: '', tools: { charge } }), {
      store,
      sessionId: 's',
      message: 'pay',
      llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
      leaseTtlMs: 100,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(seen?.aborted).toBe(true);
    expect(isAgentStoreError(seen?.reason, 'LEASE_LOST')).toBe(true);
    expect(isAgentStoreError(error, 'LEASE_LOST'), String(error)).toBe(true);
    expect(fired).toBe(0);
  });
});

describe("the keeper's give-up timer", () => {
  it('a watched call that fails fast leaves no timer that later gives a healthy lease up', async () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const lost: unknown[] = [];
    const keeper = keepLeaseAlive({
      // Every renewal answers: the lease stays healthy for as long as the test runs.
      store: { ...durableMemoryStore(), renewLease: async () => ({ expiresAt: '' }) },
      sessionId: 's',
      lease: { holder: 'h', epoch: 1 },
      ttlMs: ttl,
      sentAt: Date.now(),
      now: () => Date.now(),
      onLost: (error) => lost.push(error),
    });
    const failure = new Error('fast failure');
    await expect(
      keeper.watch(
        Promise.reject(failure),
        () => new AppendOutcomeUnknownError({ sessionId: 's', expectedSeq: 0 }),
      ),
    ).rejects.toBe(failure);
    // Past the window a give-up timer left running would fire in; renewals keep the lease.
    await vi.advanceTimersByTimeAsync(2 * (ttl - leaseSafetyMarginMs(ttl)));
    expect(lost).toEqual([]);
    keeper.stop();
  });
});

describe('lease defaults', () => {
  it('the default lease TTL is 30 s', async () => {
    const inner = durableMemoryStore();
    const ttls: number[] = [];
    const store: AgentStore = {
      ...inner,
      acquireLease(id, input) {
        ttls.push(input.ttlMs);
        return inner.acquireLease(id, input);
      },
    };
    await run(defineAgent({ name: 'a', instructions: '' }), {
      store,
      sessionId: 's',
      message: 'hi',
      llm: scriptedLlm([{ text: 'done' }]),
    });
    expect(ttls).toEqual([30_000]);
  });

  it(`an acquire whose answer is lost is repeated ${AMBIGUOUS_ACQUIRE_RETRIES} times with the same holder`, async () => {
    const inner = durableMemoryStore();
    const holders: string[] = [];
    const store: AgentStore = {
      ...inner,
      acquireLease(_id, input) {
        holders.push(input.holder);
        return Promise.reject(new SimulatedNetworkError('acquireLease'));
      },
    };
    await expect(
      run(defineAgent({ name: 'a', instructions: '' }), {
        store,
        sessionId: 's',
        message: 'hi',
        llm: scriptedLlm([{ text: 'done' }]),
      }),
    ).rejects.toBeInstanceOf(SimulatedNetworkError);
    expect(AMBIGUOUS_ACQUIRE_RETRIES).toBe(2);
    expect(holders).toHaveLength(1 + AMBIGUOUS_ACQUIRE_RETRIES);
    expect(new Set(holders).size).toBe(1);
  });
});
