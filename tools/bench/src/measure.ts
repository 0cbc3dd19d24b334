import type { OpenTestTarget } from '@agentstore/core/testing';
import { measureHistory } from './history.ts';
import { storageOf } from './machine.ts';
import type { BenchOptions } from './options.ts';
import type { BackendSettings, MeasuredStore } from './report.ts';
import { measureRoundTrips } from './round-trips.ts';
import { round } from './stats.ts';
import { measureStep } from './step.ts';
import { measureThroughput } from './throughput.ts';
import { collectGarbage } from './workload.ts';

/** Reports the phase a store is in and how far along it is. */
export type PhaseReporter = (phase: string, done: number, total: number) => void;

/** The phases of one store, in order, for progress bars. */
export const measurePhases = (_options?: BenchOptions): string[] => [
  'per tool step',
  'round trips',
  'history',
  'throughput',
  'cleanup',
];

async function backendSettings(target: OpenTestTarget): Promise<BackendSettings> {
  if (!target.durabilitySettings) return { settings: {}, storage: null };
  const reported = await target.durabilitySettings();
  const storage = reported.dataDir ?? target.dataDir;
  return { settings: { ...reported.settings }, storage: storage ? storageOf(storage) : null };
}

/** Every figure for one opened target, on one store: the one whose round trips are counted. */
export async function measureTarget(
  target: OpenTestTarget,
  options: BenchOptions,
  report: PhaseReporter,
  signal?: AbortSignal,
  packageDir = '',
): Promise<MeasuredStore> {
  const started = performance.now();
  const server = await target
    .describe()
    .catch((error: unknown) => `${target.name} (describe() failed: ${(error as Error).message})`);
  const backend = await backendSettings(target);
  const store = await target.createStore();
  const floor = target.capabilities?.floor ?? null;
  const created: string[] = [];
  const newId = (label: string) => {
    const id = `bench-${label}-${crypto.randomUUID()}`;
    created.push(id);
    return id;
  };
  const withSignal = signal ? { signal } : {};
  // Each store starts on a collected heap: what the stores measured before it left (sessions of
  // 10,000 messages, pools) is not collected inside its figures.
  collectGarbage();
  try {
    report('per tool step', 0, options.rounds);
    const step = await measureStep(store, floor, newId, {
      rounds: options.rounds,
      samples: options.samples,
      steps: options.steps,
      payloadBytes: options.payloadBytes,
      modelLatencyMs: options.modelLatencyMs,
      onRound: (done) => report('per tool step', done, options.rounds),
      ...withSignal,
    });

    report('round trips', 0, 1);
    const roundTrips = await measureRoundTrips(target, store, newId, options.steps, options.payloadBytes);
    report('round trips', 1, 1);

    // Each phase opens with done = 0, so plain progress lines (no terminal) name every phase.
    report('history', 0, 1);
    const history = await measureHistory(store, newId, {
      sizes: options.historySizes,
      rounds: options.rounds,
      samples: options.historySamples,
      payloadBytes: options.payloadBytes,
      resumeSteps: options.resumeSteps,
      onProgress: (done, total) => report('history', done, total),
      ...withSignal,
    });

    report('throughput', 0, 1);
    const throughput = await measureThroughput(store, floor, newId, {
      levels: options.concurrency,
      rounds: options.throughputRounds,
      steps: options.steps,
      payloadBytes: options.payloadBytes,
      budgetMs: options.throughputBudgetMs,
      maxSessions: options.sessions,
      onProgress: (done, total) => report('throughput', done, total),
      ...withSignal,
    });

    // Leave nothing behind on a server the user runs (AGENTSTORE_* URLs): delete every session made here.
    report('cleanup', 0, created.length);
    let cleaned = 0;
    const queue = [...created];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
          await store.deleteSession(id);
          report('cleanup', ++cleaned, created.length);
        }
      }),
    );

    return {
      store: target.name,
      status: 'ok',
      name: target.name,
      server,
      packageDir,
      notes: [...(target.notes ?? [])],
      backend,
      step,
      roundTrips,
      history,
      throughput,
      durationMs: round(performance.now() - started),
    };
  } finally {
    await (target.destroyStore ? target.destroyStore(store) : store.close());
  }
}
