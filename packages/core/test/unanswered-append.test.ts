import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  AppendOutcomeUnknownError,
  defineAgent,
  foldSession,
  isAgentStoreError,
  run,
  tool,
} from '../src/index.ts';
import { keepLeaseAlive } from '../src/loop/lease-keeper.ts';
import { leaseSafetyMarginMs } from '../src/store/lease-rules.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

// A store call on a half-open pooled connection never answers, while renewals (another connection)
// still do. The holder must give up rather than renew forever and block the session.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wraps a store: the `n`-th append is held until the test lets it through (never, by default),
 * and every renewal is counted.
 */
function heldAppend(inner: AgentStore, n: number) {
  let appends = 0;
  let renewals = 0;
  let letThrough!: () => void;
  const gate = new Promise<void>((resolve) => {
    letThrough = resolve;
  });
  let held: Promise<{ headSeq: number }> | null = null;
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const store: AgentStore = {
    durable: true,
    limits: inner.limits,
    load: (id, options) => inner.load(id, options),
    append(id, input) {
      if (++appends !== n) return inner.append(id, input);
      held = gate.then(() => inner.append(id, input));
      arrived();
      return held;
    },
    acquireLease: (id, options) => inner.acquireLease(id, options),
    renewLease: (id, input) => {
      renewals += 1;
      return inner.renewLease(id, input);
    },
    releaseLease: (id, lease) => inner.releaseLease(id, lease),
    listSessions: (input) => inner.listSessions(input),
    deleteSession: (id) => inner.deleteSession(id),
    deleteIdleSessions: (input) => inner.deleteIdleSessions(input),
    close: () => inner.close(),
  };
  return {
    store,
    renewals: () => renewals,
    /** Resolves once the held append has been sent. */
    reached,
    /** Lets the held append reach the store now; resolves with what the store answered. */
    land: () => {
      letThrough();
      return held!.then(
        (answer) => answer,
        (error: unknown) => error,
      );
    },
  };
}

function sender() {
  const sent: string[] = [];
  const agent = defineAgent({
    name: 'hung',
    instructions: '',
    tools: {
      send: tool({
        description: 'a side effect',
        input: z.object({ n: z.number() }),
        handler: ({ n }, ctx) => {
          sent.push(ctx.toolCallId);
          return { sent: n };
        },
      }),
    },
  });
  return { agent, sent };
}

const steps = () =>
  scriptedLlm([
    { toolCalls: [{ id: 'c1', name: 'send', input: { n: 1 } }] },
    { toolCalls: [{ id: 'c2', name: 'send', input: { n: 2 } }] },
    { text: 'done' },
  ]);

const TTL = 200;

describe('an append that never answers while renewals still do', () => {
  // Append 1 is write #1 of step 1, append 2 its results (pipelined with model call 2), 3 write #1 of step 2.
  for (const n of [1, 2, 3]) {
    it(`append ${n}: the run gives its lease up with AppendOutcomeUnknownError and renews no more`, async () => {
      const inner = durableMemoryStore();
      const { agent } = sender();
      const held = heldAppend(inner, n);
      const error = await run(agent, {
        store: held.store,
        sessionId: 's',
        message: 'go',
        llm: steps(),
        leaseTtlMs: TTL,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppendOutcomeUnknownError);
      expect((error as AppendOutcomeUnknownError).rereadError).toBeNull();
      const renewalsAtGiveUp = held.renewals();
      // Three renewal periods: a holder still renewing would have sent some.
      await sleep((3 * TTL) / 4);
      expect(held.renewals()).toBe(renewalsAtGiveUp);
    });
  }

  it('the abandoned append, should it land after the lease lapsed and another run took over, is refused', async () => {
    const inner = durableMemoryStore();
    const { agent, sent } = sender();
    const held = heldAppend(inner, 2);
    await expect(
      run(agent, { store: held.store, sessionId: 's', message: 'go', llm: steps(), leaseTtlMs: TTL }),
    ).rejects.toBeInstanceOf(AppendOutcomeUnknownError);
    // The next run waits out the lapsing lease, re-reads, and settles c1 (its result never landed).
    const resumed = await run(agent, {
      store: inner,
      sessionId: 's',
      // (The script is indexed by the assistant messages already stored: one.)
      llm: scriptedLlm([{}, { text: 'done' }]),
      leaseWaitMs: 5_000,
    });
    expect(resumed.status).toBe('complete');
    const before = (await inner.load('s'))!.messages;
    const late = await held.land();
    expect(isAgentStoreError(late, 'LEASE_LOST')).toBe(true);
    expect((await inner.load('s'))!.messages).toEqual(before);
    const [c1] = foldSession(before).toolCalls;
    expect(c1!.result?.kind).toBe('tool-durability-error');
    expect(sent).toEqual(['c1']);
  });
});

describe("the caller's abort while an append never answers", () => {
  for (const n of [1, 2, 3]) {
    it(`append ${n}: run() rejects with the abort reason at once and renews no more`, async () => {
      const inner = durableMemoryStore();
      const { agent } = sender();
      const held = heldAppend(inner, n);
      const controller = new AbortController();
      const ttl = 400;
      const running = run(agent, {
        store: held.store,
        sessionId: 's',
        message: 'go',
        llm: steps(),
        leaseTtlMs: ttl,
        signal: controller.signal,
        // Append 2 carries a finished handler's result, still sent after the abort; its give-up
        // is reported here (abort-keeps-finished-results.test.ts pins that) instead of printed.
        onBackgroundError: () => undefined,
      }).catch((e: unknown) => e);
      await held.reached;
      const reason = new Error('caller gave up');
      controller.abort(reason);
      expect(await running).toBe(reason);
      const renewalsAtAbort = held.renewals();
      await sleep(ttl);
      expect(held.renewals()).toBe(renewalsAtAbort);
    });
  }

  it('the next run settles the abandoned append by re-reading: landed, the result is kept', async () => {
    const inner = durableMemoryStore();
    const { agent, sent } = sender();
    const held = heldAppend(inner, 2);
    const controller = new AbortController();
    const running = run(agent, {
      store: held.store,
      sessionId: 's',
      message: 'go',
      llm: steps(),
      leaseTtlMs: 60_000,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await held.reached;
    controller.abort(new Error('caller gave up'));
    await running;
    // The write answers after all; the lease, released only after it, is then free at once.
    expect(await held.land()).toEqual({ headSeq: 3 });
    await sleep(0);
    const resumed = await run(agent, { store: inner, sessionId: 's', llm: steps() });
    expect(resumed.status).toBe('complete');
    expect(sent).toEqual(['c1', 'c2']);
    const [c1] = foldSession(resumed.messages).toolCalls;
    expect(c1!.result?.content).toBe('{"sent":1}');
  });
});

describe('the keeper bounds a store call by the lease window (fake clock)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const start = (ttlMs: number) => {
    const store = durableMemoryStore();
    let renewals = 0;
    const counted: AgentStore = {
      ...store,
      renewLease: async () => {
        renewals += 1;
        return { expiresAt: '' };
      },
    };
    const lost: unknown[] = [];
    const keeper = keepLeaseAlive({
      store: counted,
      sessionId: 's',
      lease: { holder: 'h', epoch: 1 },
      ttlMs,
      sentAt: Date.now(),
      now: () => Date.now(),
      onLost: (error) => lost.push(error),
    });
    return { keeper, lost, renewals: () => renewals };
  };
  const overdue = () => new AppendOutcomeUnknownError({ sessionId: 's', expectedSeq: 0 });

  it('a slow call that answers within the window is untouched, and renewals go on', async () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const { keeper, lost, renewals } = start(ttl);
    let answer!: (value: string) => void;
    const watched = keeper.watch(
      new Promise<string>((resolve) => {
        answer = resolve;
      }),
      overdue,
    );
    await vi.advanceTimersByTimeAsync(ttl - leaseSafetyMarginMs(ttl) - 1);
    answer('late but fine');
    await expect(watched).resolves.toBe('late but fine');
    await vi.advanceTimersByTimeAsync(ttl);
    expect(lost).toEqual([]);
    expect(() => keeper.assertHeld()).not.toThrow();
    expect(renewals()).toBeGreaterThanOrEqual(7);
    keeper.stop();
  });

  it('a call unanswered for the window gives the lease up: the run is aborted and no renewal is sent after', async () => {
    vi.useFakeTimers();
    const ttl = 1_000;
    const { keeper, lost, renewals } = start(ttl);
    const watched = keeper.watch(new Promise<never>(() => {}), overdue);
    const outcome = watched.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(ttl - leaseSafetyMarginMs(ttl));
    expect(await outcome).toBeInstanceOf(AppendOutcomeUnknownError);
    expect(lost).toEqual([await outcome]);
    expect(() => keeper.assertHeld()).toThrow(AppendOutcomeUnknownError);
    const atGiveUp = renewals();
    await vi.advanceTimersByTimeAsync(10 * ttl);
    expect(renewals()).toBe(atGiveUp);
    keeper.stop();
  });
});
