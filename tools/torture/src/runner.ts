import { randomBytes } from 'node:crypto';
import { openToolTarget } from '@agentstore/core/testing';
import { APPENDS_PER_RACER, appendRaceTrial } from './append-race.ts';
import { startLedger } from './ledger.ts';
import { deleteCreated, finishWorker, type StoreContext, spawnWorker } from './scenario-kit.ts';
import {
  crashTrial,
  faultTrial,
  fenceTrial,
  partitionTrial,
  raceTrial,
  type ScenarioName,
  type TrialOutcome,
} from './scenarios.ts';

export interface TortureOptions {
  /** Target modules (files or URLs) whose default export opens the store to torture. */
  targets: string[];
  /** Crash trials per store. */
  trials: number;
  seed: number;
  /** Racing scenarios: one per racer count, `raceTrials` times each. */
  racers?: number[];
  raceTrials?: number;
  /**
   * Lease-less append races per store (default 1): `appendRacers` processes (default 3) append to
   * one session at once, each until it has 30 acknowledged.
   */
  appendRaceTrials?: number;
  appendRacers?: number;
  /** SIGSTOP fencing trials per store. */
  fenceTrials?: number;
  /** Partition trials per store: the lease holder's renewals hang while its handlers run. */
  partitionTrials?: number;
  /** Server crash-restart trials (stores with a restartable server: Postgres, Redis). */
  faults?: boolean;
  faultTrials?: number;
  /** Crash trials run this many at a time (each on its own session). */
  concurrency?: number;
  /** Run only this crash trial number (to replay a reported violation). */
  onlyTrial?: number;
  /** The workers' working directory (default: this process's). */
  cwd?: string;
  onProgress?: (message: string) => void;
}

export interface Violation {
  store: string;
  scenario: ScenarioName | 'calibrate';
  trial: number;
  seed: number;
  sessionId: string;
  message: string;
}

export interface ScenarioSummary {
  trials: number;
  kills: number;
  resumes: number;
  completed: number;
  duplicates: number;
  lost: number;
  violations: number;
  workerErrors: Record<string, number>;
  appendErrors: Record<string, number>;
  restarts: number;
}

export interface StoreReport {
  store: string;
  describe: string;
  /** A clean run's duration here, worker ready → done: kill delays are drawn over it (the shortest seen). */
  calibratedRunMs: number;
  crash: ScenarioSummary;
  race: Array<ScenarioSummary & { racers: number; racersCompleted: number; racersThatAppended: number }>;
  /** Lease-less append races: `acknowledged` appends in all. */
  appendRace: ScenarioSummary & { racers: number; acknowledged: number };
  fence: ScenarioSummary & { leaseLostRuns: number; staleAppendsRefused: number };
  partition: ScenarioSummary & { leaseLostRuns: number; effectsFromPartitioned: number };
  fault: (ScenarioSummary & { duringRun: number }) | null;
  /** Why a scenario did not run on this store. */
  skipped: string[];
  durationMs: number;
}

export interface TortureReport {
  seed: number;
  startedAt: string;
  options: {
    trials: number;
    racers: number[];
    raceTrials: number;
    appendRaceTrials: number;
    appendRacers: number;
    fenceTrials: number;
    partitionTrials: number;
    faults: boolean;
    faultTrials: number;
  };
  stores: StoreReport[];
  violations: Violation[];
  totals: {
    trials: number;
    kills: number;
    resumes: number;
    duplicates: number;
    lost: number;
    violations: number;
  };
}

const emptySummary = (): ScenarioSummary => ({
  trials: 0,
  kills: 0,
  resumes: 0,
  completed: 0,
  duplicates: 0,
  lost: 0,
  violations: 0,
  workerErrors: {},
  appendErrors: {},
  restarts: 0,
});

function add(summary: ScenarioSummary, outcome: TrialOutcome): void {
  summary.trials++;
  summary.kills += outcome.kills;
  summary.resumes += outcome.resumes;
  summary.completed += outcome.completed ? 1 : 0;
  summary.duplicates += outcome.findings.duplicates;
  summary.lost += outcome.findings.lost;
  summary.violations += outcome.findings.violations.length;
  summary.restarts += outcome.restarts;
  for (const [key, count] of Object.entries(outcome.workerErrors))
    summary.workerErrors[key] = (summary.workerErrors[key] ?? 0) + count;
  for (const [key, count] of Object.entries(outcome.appendErrors))
    summary.appendErrors[key] = (summary.appendErrors[key] ?? 0) + count;
}

/** Runs `count` trials, `concurrency` at a time, in trial order. */
async function pool(count: number, concurrency: number, trial: (n: number) => Promise<void>): Promise<void> {
  let next = 1;
  const lane = async () => {
    while (next <= count) await trial(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
}

async function tortureStore(
  module: string,
  options: TortureOptions,
  violations: Violation[],
): Promise<StoreReport> {
  const started = performance.now();
  const log = options.onProgress ?? (() => {});
  const target = await openToolTarget(module);
  const name = target.name;
  if (target.reopen === undefined || !target.module) {
    await target.close();
    throw new Error(
      `${name}: the target declares no \`reopen\` options, so worker processes cannot open the same data: there is nothing to crash and resume`,
    );
  }
  const ledger = await startLedger({ responseDelayMs: () => Math.random() * 3 });
  const store = await target.createStore();
  const created = new Set<string>();
  try {
    const raw = target.capabilities?.raw;
    if (!raw) throw new Error(`${name}: the test target offers no raw reader, which the checks need`);
    // A report line only: a target whose describe() fails must not stop the torture.
    const describe = await target
      .describe()
      .catch(
        (error: unknown) => `${name} (describe() failed: ${error instanceof Error ? error.message : error})`,
      );
    const ctx: StoreContext = {
      storeName: name,
      target,
      store,
      raw,
      ledger,
      seed: options.seed,
      nonce: randomBytes(3).toString('hex'),
      runMs: 0,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      created,
    };
    const record = (outcome: TrialOutcome, summary: ScenarioSummary) => {
      add(summary, outcome);
      for (const message of outcome.findings.violations) {
        violations.push({
          store: name,
          scenario: outcome.scenario,
          trial: outcome.trial,
          seed: options.seed,
          sessionId: outcome.sessionId,
          message,
        });
        log(`${name} ${outcome.scenario} #${outcome.trial} VIOLATION: ${message}`);
      }
    };

    // Calibration: clean runs, timed from the worker's ready line to its done line. The fastest
    // counts: a first run also pays for cold caches, and kill delays must land inside a run.
    const timings: number[] = [];
    for (let i = 1; i <= 2; i++) {
      // A lease no cold backend can outrun: the run stops at four fifths of it (its local deadline).
      const calibration = spawnWorker(ctx, `torture-${options.seed}-${ctx.nonce}-calibrate-${i}`, {
        ttlMs: 30_000,
        waitMs: 0,
      });
      const clean = await finishWorker(calibration);
      if (!clean.completed)
        throw new Error(`${name}: a clean calibration run failed: ${clean.error} ${calibration.stderr()}`);
      const at = (t: string) => calibration.arrivals[calibration.lines.findIndex((l) => l.t === t)] ?? 0;
      timings.push(at('done') - at('ready'));
    }
    ctx.runMs = Math.max(1, Math.min(...timings));
    log(`${name}: ${describe}; a clean run takes ${Math.round(ctx.runMs)} ms`);

    // A target that says several processes cannot share its backend at once (miniflare's D1: each
    // process runs its own workerd on the persisted file, and they get SQLITE_BUSY, which
    // production D1 never shows) gets one worker process at a time: crashes and fencing, no racing.
    const oneProcessAtATime = target.multiProcess === false;
    const skipped: string[] = [];
    const crash = emptySummary();
    const only = options.onlyTrial;
    const concurrency = oneProcessAtATime ? 1 : (options.concurrency ?? 1);
    await pool(only ? 1 : options.trials, concurrency, async (n) => {
      const trial = only ?? n;
      record(await crashTrial(ctx, trial), crash);
      if (trial % 25 === 0 || only)
        log(
          `${name} crash ${crash.trials}/${options.trials}: ${crash.kills} kills, ${crash.violations} violations`,
        );
    });

    const race: StoreReport['race'] = [];
    if (oneProcessAtATime && options.racers?.length) {
      skipped.push('racing: the target declares multiProcess: false (one process at a time on its backend)');
    }
    for (const racers of oneProcessAtATime ? [] : (options.racers ?? [])) {
      const summary = { ...emptySummary(), racers, racersCompleted: 0, racersThatAppended: 0 };
      for (let trial = 1; trial <= (options.raceTrials ?? 1); trial++) {
        const outcome = await raceTrial(ctx, trial, racers);
        record(outcome, summary);
        summary.racersCompleted += Number(outcome.facts.racersCompleted);
        summary.racersThatAppended += Number(outcome.facts.racersThatAppended);
      }
      log(`${name} race x${racers}: ${summary.trials} trials, ${summary.violations} violations`);
      race.push(summary);
    }

    const appendRacers = options.appendRacers ?? 3;
    const appendRace = { ...emptySummary(), racers: appendRacers, acknowledged: 0 };
    const appendRaceTrials = oneProcessAtATime ? 0 : (options.appendRaceTrials ?? 1);
    if (oneProcessAtATime && (options.appendRaceTrials ?? 1) > 0) {
      skipped.push(
        'append racing: the target declares multiProcess: false (one process at a time on its backend)',
      );
    }
    for (let trial = 1; trial <= appendRaceTrials; trial++) {
      const outcome = await appendRaceTrial(ctx, trial, appendRacers);
      record(outcome, appendRace);
      appendRace.acknowledged += Number(outcome.facts.acknowledged);
    }
    if (appendRace.trials)
      log(
        `${name} append race x${appendRacers} (${APPENDS_PER_RACER} each, no leases): ${appendRace.violations} violations`,
      );

    const fence = { ...emptySummary(), leaseLostRuns: 0, staleAppendsRefused: 0 };
    for (let trial = 1; trial <= (options.fenceTrials ?? 0); trial++) {
      const outcome = await fenceTrial(ctx, trial);
      record(outcome, fence);
      if (outcome.facts.wokenRunError === 'LEASE_LOST') fence.leaseLostRuns++;
      if (outcome.facts.staleAppendProbe === 'LEASE_LOST') fence.staleAppendsRefused++;
    }
    if (fence.trials) log(`${name} fence: ${fence.trials} trials, ${fence.violations} violations`);

    const partition = { ...emptySummary(), leaseLostRuns: 0, effectsFromPartitioned: 0 };
    for (let trial = 1; trial <= (options.partitionTrials ?? 0); trial++) {
      const outcome = await partitionTrial(ctx, trial);
      record(outcome, partition);
      if (outcome.facts.partitionedRunError === 'LEASE_LOST') partition.leaseLostRuns++;
      partition.effectsFromPartitioned += Number(outcome.facts.effectsFromPartitioned);
    }
    if (partition.trials)
      log(`${name} partition: ${partition.trials} trials, ${partition.violations} violations`);

    let fault: StoreReport['fault'] = null;
    if (options.faults) {
      if (target.restart) {
        fault = { ...emptySummary(), duringRun: 0 };
        for (let trial = 1; trial <= (options.faultTrials ?? 1); trial++) {
          const outcome = await faultTrial(ctx, trial);
          record(outcome, fault);
          if (outcome.facts.duringRun) fault.duringRun++;
        }
        log(`${name} faults: ${fault.trials} restarts, ${fault.violations} violations`);
      } else {
        skipped.push(
          'server faults: no server this process can crash-restart (embedded or emulated backend)',
        );
      }
    }
    return {
      store: name,
      describe,
      calibratedRunMs: Math.round(ctx.runMs * 10) / 10,
      crash,
      race,
      appendRace,
      fence,
      partition,
      fault,
      skipped,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    try {
      // The torture leaves nothing behind: every session it started a worker on is deleted.
      await deleteCreated(store, created);
      await store.close();
    } finally {
      try {
        await ledger.close();
      } finally {
        await target.close();
      }
    }
  }
}

/** Crash torture: real SIGKILLs, racing workers, fencing and server restarts, store by store. */
export async function runTorture(options: TortureOptions): Promise<TortureReport> {
  const violations: Violation[] = [];
  const stores: StoreReport[] = [];
  const startedAt = new Date().toISOString();
  for (const module of options.targets) stores.push(await tortureStore(module, options, violations));
  const sum = (pick: (s: StoreReport) => number) => stores.reduce((total, s) => total + pick(s), 0);
  const every = (s: StoreReport) => [
    s.crash,
    ...s.race,
    s.appendRace,
    s.fence,
    s.partition,
    ...(s.fault ? [s.fault] : []),
  ];
  const over = (field: keyof Pick<ScenarioSummary, 'trials' | 'kills' | 'resumes' | 'duplicates' | 'lost'>) =>
    sum((s) => every(s).reduce((total, summary) => total + summary[field], 0));
  return {
    seed: options.seed,
    startedAt,
    options: {
      trials: options.trials,
      racers: options.racers ?? [],
      raceTrials: options.raceTrials ?? 1,
      appendRaceTrials: options.appendRaceTrials ?? 1,
      appendRacers: options.appendRacers ?? 3,
      fenceTrials: options.fenceTrials ?? 0,
      partitionTrials: options.partitionTrials ?? 0,
      faults: options.faults ?? false,
      faultTrials: options.faultTrials ?? 1,
    },
    stores,
    violations,
    totals: {
      trials: over('trials'),
      kills: over('kills'),
      resumes: over('resumes'),
      duplicates: over('duplicates'),
      lost: over('lost'),
      violations: violations.length,
    },
  };
}
