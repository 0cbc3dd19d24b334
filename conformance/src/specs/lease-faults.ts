import { type AgentStore, defineAgent, isAgentStoreError, type RunResult, run, tool } from '@agentstore/core';
import { type RenewFault, renewFaults, scriptedLlm } from '@agentstore/core/testing';
import { assert, assertContiguous, assertEqual, preview, violation } from '../assertions.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, jsonInput, sleep } from '../fixtures.ts';

/**
 * The lease under injected faults, through `run()`: the store and core together must never let
 * two handlers of one tool call fire. The outside world is a ledger of effects per idempotency
 * key; handlers behave as the docs ask (honour `ctx.signal`, reconcile by idempotency key).
 */

/** The partitioned holder's lease: long enough that a loaded machine reaches its handler first. */
const HOLDER_TTL_MS = 2_000;
/** Runs that must complete get a lease no loaded machine can outrun. */
const SAFE_TTL_MS = 10_000;
/** Long enough to wait out the holder's lease plus any declared clock skew, on a slow backend. */
const WAIT_MS = 60_000;

/** What the outside world saw: effects per idempotency key. */
function effectLedger() {
  const fired = new Map<string, number>();
  return {
    fired,
    fire(key: string) {
      fired.set(key, (fired.get(key) ?? 0) + 1);
    },
    happened: (key: string) => fired.has(key),
  };
}

type Ledger = ReturnType<typeof effectLedger>;

/** A promise and the function that resolves it. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** A charge tool, reconcilable by idempotency key, whose handler runs `before` first. */
function payAgent(ledger: Ledger, before: (signal: AbortSignal) => Promise<void>) {
  return defineAgent({
    name: 'pay',
    instructions: 'Charge the order.',
    tools: {
      charge: tool({
        description: 'Charges a card (a side effect; the provider dedupes by idempotency key)',
        input: jsonInput,
        handler: async (_input, ctx) => {
          await before(ctx.signal);
          // What the docs ask of a handler: check ctx.signal right before the effect.
          ctx.signal.throwIfAborted();
          ledger.fire(ctx.idempotencyKey);
          return { charged: 42 };
        },
        reconcile: async (_input, ctx) =>
          ledger.happened(ctx.idempotencyKey)
            ? { happened: true, output: { charged: 42 } }
            : { happened: false },
      }),
    },
  });
}

const script = () =>
  scriptedLlm([
    { toolCalls: [{ id: 'charge-1', name: 'charge', input: { cents: 4200 } }] },
    { text: 'Charged.' },
  ]);

const describeError = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : preview(error);

/**
 * Worker A's renewals hang or fail (partitioned from the database) while its handler waits on a
 * slow downstream. Worker B queues for the session, takes it once the store lets it, reconciles
 * and fires. When B's handler starts, A must already be aborted; A, released afterwards, must not
 * fire. One effect in the ledger, whatever the store.
 */
async function partitionedHolder(ctx: CheckContext, fault: RenewFault): Promise<void> {
  const sessionId = freshId(`partition-${fault}`);
  const ledger = effectLedger();
  let holderSignal: AbortSignal | undefined;
  const { promise: started, open: holderStarted } = latch();
  const { promise: holderGate, open: releaseHolder } = latch();
  let overlap: string | null = null;

  const holderAgent = payAgent(ledger, async (signal) => {
    holderSignal = signal;
    holderStarted();
    await holderGate; // the payment API is slow; meanwhile the database is unreachable
  });
  const successorAgent = payAgent(ledger, async () => {
    // Let any overdue timer of the holder run first: only a deadline that truly has not passed counts.
    await sleep(0);
    if (holderSignal && !holderSignal.aborted) {
      overlap = 'the successor’s handler started while the partitioned holder’s ctx.signal was still live';
    }
  });

  const holderStore = renewFaults(ctx.store, fault);
  const holderRun = run(holderAgent, {
    store: holderStore,
    sessionId,
    message: 'Charge order 42.',
    llm: script(),
    leaseTtlMs: HOLDER_TTL_MS,
  }).then(
    () => null,
    (error: unknown) => error,
  );
  const first = await Promise.race([started.then(() => 'started' as const), holderRun]);
  if (first !== 'started') {
    violation(`the holder's run ended before its handler started: ${describeError(first)}`);
  }
  let successor: RunResult;
  try {
    successor = await run(successorAgent, {
      store: ctx.store,
      sessionId,
      llm: script(),
      leaseTtlMs: SAFE_TTL_MS,
      leaseWaitMs: WAIT_MS,
    });
  } catch (error) {
    releaseHolder();
    await holderRun;
    return violation(`the successor run failed: ${describeError(error)}`);
  }
  releaseHolder();
  const holderOutcome = await holderRun;
  assert(overlap === null, `${overlap} (renewals ${fault === 'hang' ? 'hung' : 'failed'})`);
  assert(
    isAgentStoreError(holderOutcome, 'LEASE_LOST'),
    `the partitioned holder's run must end with LeaseLostError, got ${describeError(holderOutcome)}`,
  );
  assert(holderStore.renewCalls >= 1, 'the holder never tried to renew its lease');
  const counts = [...ledger.fired.values()];
  assertEqual(counts, [1], 'effects per idempotency key (the charge must fire exactly once)');
  assertEqual(successor.status, 'complete', 'the successor run');
  const loaded = await assertContiguous(ctx, sessionId, 'after the partition');
  const results = loaded.messages.filter((m) => m.role === 'tool');
  assertEqual(results.length, 1, 'tool results stored for the one call');
}

/** Wraps a store to count `acquireLease` calls (every attempt, busy or not). */
function countingAcquires(store: AgentStore) {
  let calls = 0;
  const counted: AgentStore = {
    ...store,
    durable: store.durable,
    limits: store.limits,
    acquireLease: (id, input) => {
      calls += 1;
      return store.acquireLease(id, input);
    },
  };
  return {
    store: counted,
    get calls() {
      return calls;
    },
  };
}

const leaseFaultChecks: ConformanceCheck[] = [
  {
    name: 'a holder whose renewals hang (partitioned) is aborted before anyone can take over: one effect per call',
    requires: ['durable'],
    timeoutMs: 120_000,
    run: (ctx) => partitionedHolder(ctx, 'hang'),
  },
  {
    name: 'a holder whose renewals fail is aborted before anyone can take over: one effect per call',
    requires: ['durable'],
    timeoutMs: 120_000,
    run: (ctx) => partitionedHolder(ctx, 'fail'),
  },
  {
    name: 'runs queued on a busy session take it promptly once it is released, not at the old expiry, without hammering',
    requires: ['durable'],
    timeoutMs: 120_000,
    async run(ctx) {
      const sessionId = freshId('queue');
      const ledger = effectLedger();
      const { promise: holderGate, open: releaseHolder } = latch();
      const { promise: started, open: holderStarted } = latch();
      // The holder's lease would last 10 min; the waiters give up after 1 min. Only a waiter that
      // notices the release (not one sleeping until the expiry it was told) can get in.
      const holder = run(
        payAgent(ledger, () => {
          holderStarted();
          return holderGate;
        }),
        { store: ctx.store, sessionId, message: 'Charge order 42.', llm: script(), leaseTtlMs: 600_000 },
      );
      const first = await Promise.race([
        started.then(() => 'started' as const),
        holder.catch((e: unknown) => e),
      ]);
      if (first !== 'started')
        violation(`the holder's run ended before its handler started: ${describeError(first)}`);
      const waiters = [1, 2, 3].map((n) => {
        const counted = countingAcquires(ctx.store);
        const startedAt = performance.now();
        const done = run(defineAgent({ name: 'pay', instructions: '' }), {
          store: counted.store,
          sessionId,
          message: `Follow-up ${n}`,
          messageId: `follow-up-${n}-${sessionId}`,
          llm: scriptedLlm(Array.from({ length: 8 }, () => ({ text: `ok ${n}` }))),
          leaseTtlMs: SAFE_TTL_MS,
          leaseWaitMs: WAIT_MS,
        }).then((result) => ({ result, waitedMs: performance.now() - startedAt, calls: counted.calls }));
        return done;
      });
      await sleep(300);
      releaseHolder();
      const held = await holder;
      assertEqual(held.status, 'complete', 'the holder run');
      const settled = await Promise.allSettled(waiters);
      for (const [i, outcome] of settled.entries()) {
        if (outcome.status === 'rejected') {
          violation(`queued run ${i + 1} failed: ${describeError(outcome.reason)}`);
        }
        const { result, waitedMs, calls } = outcome.value;
        assertEqual(result.status, 'complete', `queued run ${i + 1}`);
        // Polls are at least 25 ms (−25% jitter) apart: more calls than that allows is a busy loop.
        const allowed = 3 + Math.ceil(waitedMs / 18);
        assert(
          calls <= allowed,
          `queued run ${i + 1} called acquireLease ${calls} times in ${Math.round(waitedMs)} ms (at most ${allowed})`,
        );
      }
      assertEqual([...ledger.fired.values()], [1], 'effects per idempotency key');
      await assertContiguous(ctx, sessionId, 'after the queue drained');
    },
  },
];

export const leaseFaultSpec: ConformanceSpec = { title: 'leases under faults', checks: leaseFaultChecks };
