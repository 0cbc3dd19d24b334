import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineAgent, isAgentStoreError, run, tool } from '../src/index.ts';
import type { AgentStore } from '../src/store/contract.ts';
import { processClockMs } from '../src/store/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack: the holder is paused (SIGSTOP, a stopped VM, a long GC, a synchronous call) while its
 * handler awaits something, for longer than the lease. While it is paused, another worker takes
 * the lease, reconciles ("not found") and fires. When the holder continues, its handler resumes
 * before the lease keeper's abort timer has had a chance to run (an I/O answer or an earlier
 * timer is processed first), and checks `ctx.signal` right before its effect — as docs/durability.md
 * tells it to. The docs promise: "At that local deadline ctx.signal aborts ... a worker that lost
 * its lease never *starts* an effect after another may have taken over".
 *
 * The pause is modelled without any race: timers are frozen (the event loop does not turn, as in a
 * stopped process) while the real monotonic clock moves on; the test waits on the store's own
 * clock until the lease has expired there, then runs the successor entirely through promises.
 */

afterEach(() => {
  vi.useRealTimers();
});

/** Blocks the thread until the store's clock has passed `iso` (a stopped process, a GC pause). */
function pauseUntil(iso: string): void {
  const until = Date.parse(iso);
  while (processClockMs() <= until) {
    // busy: the event loop does not turn
  }
}

describe('a holder paused past its lease', () => {
  it('after the pause, ctx.signal checked right before the effect reports the lost lease (one effect per idempotencyKey)', async () => {
    // Only the timers are frozen; performance.now and the store's clock run for real.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate'],
    });
    const store = durableMemoryStore();
    let expiresAt = '';
    const watching: AgentStore = {
      ...store,
      acquireLease: async (id, input) => {
        const granted = await store.acquireLease(id, input);
        expiresAt = granted.session.lease?.expiresAt ?? '';
        return granted;
      },
    };
    const effects = new Map<string, number>();
    let inHandler!: () => void;
    const reachedHandler = new Promise<void>((resolve) => {
      inHandler = resolve;
    });
    let answer!: () => void;
    const downstreamAnswer = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let firstAttempt = true;
    const charge = tool({
      description: 'charges a card',
      input: z.object({}),
      handler: async (_input, ctx) => {
        if (firstAttempt) {
          firstAttempt = false;
          inHandler();
          await downstreamAnswer; // e.g. a slow "prepare" call to the payment API
        }
        // Exactly what the docs ask: check ctx.signal right before the effect.
        if (ctx.signal.aborted) throw ctx.signal.reason;
        effects.set(ctx.idempotencyKey, (effects.get(ctx.idempotencyKey) ?? 0) + 1);
        return 'charged';
      },
      reconcile: (_input, ctx) =>
        effects.has(ctx.idempotencyKey) ? { happened: true, output: 'charged' } : { happened: false },
    });
    const agent = defineAgent({ name: 'pay', instructions: '', tools: { charge } });

    const first = run(agent, {
      store: watching,
      sessionId: 'paused',
      message: 'pay',
      llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
      leaseTtlMs: 200,
    }).catch((error: unknown) => error);
    await reachedHandler;

    // The holder is paused past its lease (by the store's clock, so the store now lets B in).
    pauseUntil(expiresAt);

    // Worker B takes over, reconciles "not found" and fires.
    const second = await run(agent, {
      store,
      sessionId: 'paused',
      llm: scriptedLlm([{ text: 'done' }, { text: 'done' }]),
      leaseTtlMs: 10_000,
    });
    expect(second.status).toBe('complete');

    // The paused holder continues: its downstream call answers, it checks ctx.signal, ...
    answer();
    const outcome = await first;
    expect(isAgentStoreError(outcome, 'LEASE_LOST')).toBe(true);
    // ... and must not fire a second time for the same call.
    expect([...effects.values()]).toEqual([1]);
  });
});

const GUARDS: [string, (signal: AbortSignal) => void][] = [
  [
    'ctx.signal.aborted',
    (signal) => {
      if (signal.aborted) throw signal.reason;
    },
  ],
  ['ctx.signal.throwIfAborted()', (signal) => signal.throwIfAborted()],
];

describe('the holder machine is suspended (laptop sleep, a paused VM)', () => {
  for (const [guardName, guard] of GUARDS) {
    it(`a suspend that the monotonic clock does not count still ends the lease: ${guardName} reports it after resume`, async () => {
      // CLOCK_MONOTONIC (performance.now) stops while a machine is suspended; the database's clock
      // and the wall clock do not. Model it: the wall clock jumps 10 min, performance.now does not,
      // and no timer runs.
      vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
      const store = durableMemoryStore();
      let inHandler!: () => void;
      const reachedHandler = new Promise<void>((resolve) => {
        inHandler = resolve;
      });
      let answer!: () => void;
      const downstreamAnswer = new Promise<void>((resolve) => {
        answer = resolve;
      });
      let fired = 0;
      const charge = tool({
        description: 'charges a card',
        input: z.object({}),
        handler: async (_input, ctx) => {
          inHandler();
          await downstreamAnswer;
          guard(ctx.signal);
          fired += 1;
          return 'charged';
        },
      });
      const outcome = run(defineAgent({ name: 'pay', instructions: '', tools: { charge } }), {
        store,
        sessionId: 'suspended',
        message: 'pay',
        llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
        leaseTtlMs: 30_000,
      }).catch((error: unknown) => error);
      await reachedHandler;
      vi.setSystemTime(Date.now() + 10 * 60_000); // asleep for 10 min; a 30 s lease is long gone
      answer();
      expect(isAgentStoreError(await outcome, 'LEASE_LOST')).toBe(true);
      expect(fired).toBe(0);
    });
  }
});
