import type { HistoryRow } from './history.ts';
import type { MachineInfo, MachineSnapshot, StorageInfo } from './machine.ts';
import type { BenchOptions } from './options.ts';
import type { StepResult } from './step.ts';
import type { ThroughputResult } from './throughput.ts';

export type { HistoryRow } from './history.ts';
export type { RatioSpread, Spread } from './rounds.ts';
export type { FloorSteps, StepResult } from './step.ts';
export type { RateSpread, ThroughputResult } from './throughput.ts';

export interface RoundTrips {
  /** `driver`: counted by the target's `roundTrips` on the timed store; `store-calls`: `store.*` calls (the target counts none). */
  method: 'driver' | 'store-calls';
  /** What one count is. */
  unit: string;
  /** Per `store.append` of write #1 as `run()` sends it (one message, lease token, state). */
  perAppend: number;
  /** Per floor append of one message, on the same counted driver; null without a floor. */
  floorPerAppend: number | null;
  /** Per whole `run()` of `steps` tool steps (lease, load, every append, release). */
  perRun: number;
  /** perRun ÷ steps. */
  perStep: number;
  /** `store.*` calls per run, whatever the backend. */
  storeCallsPerRun: number;
}

/** Where the figures came from, besides the machine: the backend's durability settings. */
export interface BackendSettings {
  /** As `durabilitySettings()` reported them; empty when the target reports none. */
  settings: Record<string, string>;
  /** The file system of the backend's data directory; null when this machine cannot see it. */
  storage: StorageInfo | null;
}

export interface MeasuredStore {
  store: string;
  status: 'ok';
  /** The target's name, e.g. "sqlite (WAL file, synchronous FULL)". */
  name: string;
  /** Server and driver versions, from the target's `describe()`. */
  server: string;
  /** The package directory holding the target module, relative to the working directory ('' if none). */
  packageDir: string;
  notes: string[];
  backend: BackendSettings;
  /** The headline. */
  step: StepResult;
  roundTrips: RoundTrips;
  history: HistoryRow[];
  throughput: ThroughputResult[];
  durationMs: number;
}

export interface UnmeasuredStore {
  store: string;
  /** `skipped`: the backend could not start; `failed`: it started, a measurement threw. */
  status: 'skipped' | 'failed';
  reason: string;
}

export type StoreResult = MeasuredStore | UnmeasuredStore;

export interface BenchReport {
  tool: 'agentstore-bench';
  version: string;
  startedAt: string;
  durationMs: number;
  note: string;
  /** The machine, with its load when the run started. */
  machine: MachineInfo;
  /** Load when the run ended. */
  atEnd: MachineSnapshot;
  options: BenchOptions;
  stores: StoreResult[];
}

export const isMeasured = (result: StoreResult): result is MeasuredStore => result.status === 'ok';

/** The target the headline is judged on, and its limit: Postgres overhead ≤ 1.2× one floor append. */
export const HEADLINE_TARGET = {
  ratio: 1.2,
  what: 'Postgres durable overhead per tool step ≤ 1.2× one floor append (paced as a step)',
};

export const REPORT_NOTE =
  'Absolute times depend on the machine, its load and the server setup: compare ratios within one run, not times across machines.';
