import type { MachineInfo } from './machine.ts';
import type { BenchOptions } from './options.ts';
import type { LatencyStats } from './stats.ts';

export interface RoundTrips {
  /** `driver`: counted by the target's `roundTrips`; `store-calls`: `store.*` calls (the target counts none). */
  method: 'driver' | 'store-calls';
  /** What one count is. */
  unit: string;
  /** Per `store.append` of 3 messages with lease token and state. */
  perAppend: number;
  /** Per floor append of the same rows, on the same counted driver; null without a floor. */
  floorPerAppend: number | null;
  /** Per whole scripted run (lease, load, every append, release). */
  perRun: number;
  perStep: number;
  /** `store.*` calls per run, whatever the backend. */
  storeCallsPerRun: number;
}

export interface LoopResult {
  steps: number;
  /** `run()` with the store and a fresh session id: the whole durable run. */
  durable: LatencyStats;
  /** The same run without a store. */
  stateless: LatencyStats;
  /** (durable p50 − stateless p50) / steps. */
  overheadPerStepUs: number;
  /** durable p50 / stateless p50. */
  ratio: number;
}

export interface ConcurrencyResult {
  concurrency: number;
  /** Workers actually running (no more than there are sessions). */
  workers: number;
  sessions: number;
  steps: number;
  elapsedMs: number;
  stepsPerSecond: number;
}

export interface BytesResult {
  /** `raw-reader`: rows read back with the raw driver (and checked against `load`); `load`: no raw reader. */
  source: 'raw-reader' | 'load';
  steps: number;
  messages: number;
  /** Σ message JSON bytes (`messageByteLength`) of the stored messages of one run. */
  messageBytes: number;
  messageBytesPerStep: number;
  /** JSON bytes of the session record (rewritten by every append). */
  sessionRecordBytes: number;
  /** messageBytesPerStep + sessionRecordBytes. */
  perStep: number;
}

export interface MeasuredStore {
  store: string;
  status: 'ok';
  /** The target's name, e.g. "sqlite (WAL file, synchronous FULL)". */
  name: string;
  /** Server and driver versions, from the target's `describe()`. */
  server: string;
  notes: string[];
  append: LatencyStats;
  /** The raw driver's cheapest correct append of the same rows; null when the target has none. */
  floor: LatencyStats | null;
  /** append p50 / floor p50. */
  floorRatio: number | null;
  roundTrips: RoundTrips;
  loop: LoopResult;
  concurrency: ConcurrencyResult[];
  bytes: BytesResult;
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
  machine: MachineInfo;
  options: BenchOptions;
  stores: StoreResult[];
}

export const isMeasured = (result: StoreResult): result is MeasuredStore => result.status === 'ok';

export const REPORT_NOTE =
  'Absolute times depend on the machine, its load and the server setup: compare ratios within one run, not times across machines.';
