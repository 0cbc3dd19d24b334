import { checkTrial, type TrialFindings } from './invariants.ts';
import { createPrng, deriveSeed, type Prng } from './prng.ts';
import type { WorkerLine } from './protocol.ts';
import {
  exitProblem,
  finishWorker,
  type StoreContext,
  sleep,
  spawnWorker,
  tally,
  type WorkerRun,
} from './scenario-kit.ts';

export type ScenarioName = 'crash' | 'race' | 'append-race' | 'fence' | 'partition' | 'fault';

export interface TrialOutcome {
  scenario: ScenarioName;
  trial: number;
  sessionId: string;
  /** SIGKILLs that landed on a running worker. */
  kills: number;
  /** Worker processes started after the first one. */
  resumes: number;
  completed: boolean;
  /** How each worker that did not complete ended, by error code (SIGKILLed workers not counted). */
  workerErrors: Record<string, number>;
  /** Appends the store refused or left unknown, by error code, as the workers saw them. */
  appendErrors: Record<string, number>;
  restarts: number;
  /** Scenario-specific facts for the report (fencing errors, racer count…). */
  facts: Record<string, string | number | boolean>;
  findings: TrialFindings;
}

/**
 * Crash trials: short leases, so a resume waits little for a dead worker's lease — but not shorter
 * than this backend can keep: a live worker stops at its local deadline (four fifths of the TTL)
 * when no renewal answers sooner, so the TTL scales with the calibrated clean run (2×, 1–10 s).
 */
const crashLease = (ctx: StoreContext) => ({
  ttlMs: Math.round(Math.min(10_000, Math.max(1_000, ctx.runMs * 2))),
  waitMs: 30_000,
});
/**
 * Racers and takeover workers: a lease long enough that CPU contention or a cold backend cannot
 * outrun it. Queued workers take it within a poll interval of its release, whatever its length.
 */
const CALM_LEASE = { ttlMs: 10_000, waitMs: 60_000 };
const MAX_KILLS = 3;
const MAX_WORKERS = 10;

const sessionFor = (ctx: StoreContext, scenario: string, trial: number) =>
  `torture-${ctx.seed}-${ctx.nonce}-${scenario}-${trial}`;

function collect(runs: WorkerRun[], outcome: TrialOutcome): void {
  for (const run of runs) {
    if (!run.completed && !run.killed && run.error) tally(outcome.workerErrors, run.error);
    for (const line of run.lines)
      if (line.t === 'append-error') tally(outcome.appendErrors, line.code ?? line.name);
  }
}

async function finish(
  ctx: StoreContext,
  outcome: Omit<TrialOutcome, 'findings' | 'completed' | 'workerErrors' | 'appendErrors'>,
  runs: WorkerRun[],
  extra: string[] = [],
): Promise<TrialOutcome> {
  const lines: WorkerLine[][] = runs.map((run) => run.lines);
  const evidence = {
    sessionId: outcome.sessionId,
    raw: ctx.raw,
    store: ctx.store,
    ledgerCalls: ctx.ledger.calls(outcome.sessionId),
    workers: lines,
  };
  // After a server restart the parent's own connections may need a moment to come back.
  const findings = await checkTrial(evidence).catch(async () => {
    await sleep(1_000);
    return checkTrial(evidence);
  });
  for (const run of runs) {
    const problem = exitProblem(run);
    if (problem) findings.violations.push(problem);
  }
  findings.violations.push(...extra);
  const result: TrialOutcome = {
    ...outcome,
    completed: runs.some((run) => run.completed),
    workerErrors: {},
    appendErrors: {},
    findings,
  };
  collect(runs, result);
  return result;
}

/** Resumes in fresh processes (each maybe killed again) until one completes. */
async function resumeUntilComplete(
  ctx: StoreContext,
  sessionId: string,
  prng: Prng,
  runs: WorkerRun[],
  kills: { count: number },
  killAgain: number,
): Promise<void> {
  while (!runs.some((run) => run.completed) && runs.length < MAX_WORKERS) {
    const kill = kills.count < MAX_KILLS && prng.chance(killAgain);
    const delay = prng.next() * ctx.runMs;
    const run = await finishWorker(spawnWorker(ctx, sessionId, crashLease(ctx)), kill ? delay : null);
    if (run.killed) kills.count++;
    runs.push(run);
  }
}

/** One run, SIGKILLed at a random moment, resumed (and maybe killed again) until it completes. */
export async function crashTrial(ctx: StoreContext, trial: number): Promise<TrialOutcome> {
  const prng = createPrng(deriveSeed(ctx.seed, ctx.storeName, 'crash', trial));
  const sessionId = sessionFor(ctx, 'crash', trial);
  const kills = { count: 0 };
  const runs: WorkerRun[] = [];
  const first = await finishWorker(
    spawnWorker(ctx, sessionId, crashLease(ctx)),
    prng.next() * ctx.runMs * 0.9,
  );
  if (first.killed) kills.count++;
  else if (first.completed) {
    // The kill came too late: a warmed-up backend (DynamoDB Local's JVM) runs faster than the
    // calibration did, so later kills are drawn over this shorter run.
    const at = (t: string) => first.worker.arrivals[first.lines.findIndex((line) => line.t === t)] ?? 0;
    const took = at('done') - at('ready');
    if (took > 0) ctx.runMs = Math.min(ctx.runMs, took);
  }
  runs.push(first);
  await resumeUntilComplete(ctx, sessionId, prng, runs, kills, 0.35);
  return finish(
    ctx,
    {
      scenario: 'crash',
      trial,
      sessionId,
      kills: kills.count,
      resumes: runs.length - 1,
      restarts: 0,
      facts: {},
    },
    runs,
  );
}

/** A crashed session, then `racers` processes resuming it at once; they queue on the lease. */
export async function raceTrial(ctx: StoreContext, trial: number, racers: number): Promise<TrialOutcome> {
  const prng = createPrng(deriveSeed(ctx.seed, ctx.storeName, 'race', racers, trial));
  const sessionId = sessionFor(ctx, `race${racers}`, trial);
  const first = await finishWorker(
    spawnWorker(ctx, sessionId, crashLease(ctx)),
    prng.next() * ctx.runMs * 0.7,
  );
  const started = Array.from({ length: racers }, () => spawnWorker(ctx, sessionId, CALM_LEASE));
  const raced = await Promise.all(started.map((worker) => finishWorker(worker)));
  const extra = raced.flatMap((run, i) =>
    run.completed ? [] : [`racer ${i + 1} of ${racers} ended with ${run.error ?? 'no result'}`],
  );
  const epochs = raced.flatMap((run) =>
    run.lines.flatMap((line) => (line.t === 'lease' ? [line.epoch] : [])),
  );
  const worked = raced.filter((run) => run.lines.some((line) => line.t === 'ack')).length;
  return finish(
    ctx,
    {
      scenario: 'race',
      trial,
      sessionId,
      kills: first.killed ? 1 : 0,
      resumes: racers,
      restarts: 0,
      facts: {
        racers,
        racersCompleted: raced.filter((r) => r.completed).length,
        racersThatAppended: worked,
        epochs: epochs.join(' '),
      },
    },
    [first, ...raced],
    extra,
  );
}

/**
 * Fencing: a worker is SIGSTOPped inside a side-effecting handler for longer than its lease,
 * another takes over and finishes, then the first is SIGCONTed: its run must end with
 * LeaseLostError, a direct append with its stale lease at the current head must be refused
 * with LeaseLostError, and the side effect must still have run at most once.
 */
export async function fenceTrial(ctx: StoreContext, trial: number): Promise<TrialOutcome> {
  const sessionId = sessionFor(ctx, 'fence', trial);
  // Short, yet long enough for this backend to reach step 2 before the local deadline.
  const staleLease = { ttlMs: Math.max(400, crashLease(ctx).ttlMs), waitMs: 15_000 };
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let stoppedInside: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stoppedInside = resolve;
  });
  const stale = spawnWorker(ctx, sessionId, staleLease, true);
  let stoppedCall = '';
  ctx.ledger.setHook(async (call) => {
    // The serial notify (step 2): nothing else of the worker is in flight while it is stopped.
    if (call.sessionId !== sessionId || call.tool !== 'notify' || call.toolCallId === 'notify-1') return;
    if (call.pid !== stale.pid || stoppedCall) return;
    stoppedCall = call.toolCallId;
    stale.signal('SIGSTOP', true);
    stoppedInside();
    await held;
  });
  const extra: string[] = [];
  const staleRun = finishWorker(stale);
  try {
    await Promise.race([stopped, stale.exited]);
    if (!stoppedCall) extra.push('the worker to stop never reached the notify handler');
    // Past the stale lease's expiry (it cannot renew while stopped), then a takeover.
    await sleep(staleLease.ttlMs * 2 + 200);
    const takeover = await finishWorker(spawnWorker(ctx, sessionId, CALM_LEASE));
    if (!takeover.completed) extra.push(`the takeover worker ended with ${takeover.error ?? 'no result'}`);
    stale.signal('SIGCONT', true);
    // Give the woken worker's lease keeper its overdue tick before the handler's answer arrives.
    await sleep(300);
    release();
    const woken = await staleRun;
    const probe = woken.lines.find((line) => line.t === 'probe');
    const probeResult = probe?.t === 'probe' ? probe.result : 'none';
    // LEASE_LOST from its own lease deadline (or the store, which checks the lease before the seq).
    if (woken.error !== 'LEASE_LOST')
      extra.push(`the woken worker's run ended with ${woken.error ?? 'success'}, not LEASE_LOST`);
    const takeoverHead = Math.min(
      ...takeover.lines.flatMap((line) => (line.t === 'ack' ? [line.headSeq] : [Number.POSITIVE_INFINITY])),
    );
    const staleAcksAfter = woken.lines.filter(
      (line) => line.t === 'ack' && line.headSeq >= takeoverHead,
    ).length;
    if (staleAcksAfter) extra.push(`the stale worker appended ${staleAcksAfter} times after the takeover`);
    // The takeover found the stopped call open: with neither retry nor reconcile it must not run it again.
    const stored = (await ctx.store.load(sessionId))?.messages ?? [];
    const settled = stored.find((m) => m.role === 'tool' && m.toolCallId === stoppedCall);
    if (stoppedCall && settled?.kind !== 'tool-durability-error')
      extra.push(
        `the stopped notify ${stoppedCall} was settled as ${settled ? (settled.kind ?? 'a handler result') : 'nothing'}`,
      );
    const epochOf = (lines: WorkerLine[]) =>
      lines.flatMap((line) => (line.t === 'lease' ? [line.epoch] : []))[0];
    const staleEpoch = epochOf(woken.lines);
    const takeoverEpoch = epochOf(takeover.lines);
    // Fencing is by epoch: only once another worker was granted a newer one must the store refuse.
    if (takeoverEpoch !== undefined && probeResult !== 'LEASE_LOST')
      extra.push(
        `an append with the stale lease (epoch ${staleEpoch}) at the current head answered ${probeResult}, not LEASE_LOST, after epoch ${takeoverEpoch} was granted`,
      );
    return finish(
      ctx,
      {
        scenario: 'fence',
        trial,
        sessionId,
        kills: 0,
        resumes: 1,
        restarts: 0,
        facts: {
          stoppedIn: stoppedCall,
          wokenRunError: woken.error ?? 'none',
          staleAppendProbe: probeResult,
          staleAppendsAfterTakeover: staleAcksAfter,
          staleEpoch: staleEpoch ?? -1,
          takeoverEpoch: takeoverEpoch ?? -1,
        },
      },
      [woken, takeover],
      extra,
    );
  } finally {
    release();
    ctx.ledger.setHook(null);
    stale.signal('SIGCONT', true);
  }
}

/**
 * Partition: a worker's lease renewals hang (it cannot reach the database) while its step-1
 * handlers are inside a slow downstream call that outlasts the lease. Another worker queues,
 * takes the session once the store lets it, and completes the run. The partitioned worker must
 * end with LeaseLostError and must not deliver a single effect after the takeover: its handlers,
 * which honour `ctx.signal` before the effect, find it aborted. The ledger then holds each effect
 * at most once (and `charge` exactly once).
 */
export async function partitionTrial(ctx: StoreContext, trial: number): Promise<TrialOutcome> {
  const sessionId = sessionFor(ctx, 'partition', trial);
  // The crash trials' lease (it fits this backend); the slow downstream outlasts it three times.
  const lease = crashLease(ctx);
  const cut = spawnWorker(ctx, sessionId, lease, false, { handlerDelayMs: lease.ttlMs * 3 });
  const cutRun = finishWorker(cut);
  const extra: string[] = [];
  while (cut.alive && !cut.lines.some((line) => line.t === 'handler')) await sleep(10);
  if (!cut.lines.some((line) => line.t === 'handler'))
    extra.push('the partitioned worker exited before a handler started');
  const takeover = await finishWorker(spawnWorker(ctx, sessionId, CALM_LEASE));
  const partitioned = await cutRun;
  if (!takeover.completed) extra.push(`the takeover worker ended with ${takeover.error ?? 'no result'}`);
  if (partitioned.error !== 'LEASE_LOST')
    extra.push(`the partitioned worker's run ended with ${partitioned.error ?? 'success'}, not LEASE_LOST`);
  const late = ctx.ledger.calls(sessionId).filter((call) => call.pid === partitioned.worker.pid);
  if (late.length)
    extra.push(
      `the partitioned worker delivered ${late.length} effect(s) after losing its lease: ${late.map((c) => `${c.tool}/${c.toolCallId}`).join(', ')}`,
    );
  const charges = ctx.ledger.calls(sessionId).filter((call) => call.tool === 'charge' && !call.replayed);
  return finish(
    ctx,
    {
      scenario: 'partition',
      trial,
      sessionId,
      kills: 0,
      resumes: 1,
      restarts: 0,
      facts: {
        partitionedRunError: partitioned.error ?? 'none',
        effectsFromPartitioned: late.length,
        handlersStarted: partitioned.lines.filter((line) => line.t === 'handler').length,
        charges: charges.length,
      },
    },
    [partitioned, takeover],
    extra,
  );
}

/** Server fault: the backend crash-restarts while a worker runs; fresh workers resume until done. */
export async function faultTrial(ctx: StoreContext, trial: number): Promise<TrialOutcome> {
  const restart = ctx.target.restart?.bind(ctx.target);
  if (!restart) throw new Error(`${ctx.storeName} has no server this process can restart`);
  const prng = createPrng(deriveSeed(ctx.seed, ctx.storeName, 'fault', trial));
  const sessionId = sessionFor(ctx, 'fault', trial);
  const worker = spawnWorker(ctx, sessionId, { ttlMs: 1_000, waitMs: 30_000 });
  const running = finishWorker(worker);
  await worker.ready;
  await sleep(prng.next() * ctx.runMs);
  const duringRun = worker.alive;
  await restart();
  const runs = [await running];
  await resumeUntilComplete(ctx, sessionId, prng, runs, { count: MAX_KILLS }, 0);
  return finish(
    ctx,
    {
      scenario: 'fault',
      trial,
      sessionId,
      kills: 0,
      resumes: runs.length - 1,
      restarts: 1,
      facts: { duringRun },
    },
    runs,
  );
}
