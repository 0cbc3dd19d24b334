/**
 * agentstore-bench as a library: measure stores side by side, render the table and the chart.
 * @module @agentstore/bench
 */
export { renderChart } from './chart.ts';
export { formatBytes, formatCount, formatMicros, formatRatio } from './format.ts';
export { describeMachine, type MachineInfo, machineInfo } from './machine.ts';
export { measurePhases, measureTarget, type PhaseReporter } from './measure.ts';
export {
  BENCH_DEFAULTS,
  BENCH_USAGE,
  type BenchCommand,
  type BenchInput,
  type BenchOptions,
  BenchUsageError,
  MAX_PAYLOAD_BYTES,
  parseBenchArgs,
  QUICK_DEFAULTS,
  resolveBenchOptions,
} from './options.ts';
export {
  DEFAULT_MAX_FLOOR_RATIO,
  measureAppendRatio,
  measureLoopRatio,
  measureStepOverhead,
  type PerfSampling,
  type RatioMeasurement,
  type StepOverheadMeasurement,
} from './perf/ratios.ts';
export { createProgress, overallFraction, type ProgressReporter, type ProgressStream } from './progress.ts';
export {
  type BenchReport,
  type BytesResult,
  type ConcurrencyResult,
  isMeasured,
  type LoopResult,
  type MeasuredStore,
  REPORT_NOTE,
  type RoundTrips,
  type StoreResult,
  type UnmeasuredStore,
} from './report.ts';
export { type BenchHooks, type BenchProgress, runBench } from './run-bench.ts';
export { type InterleavedSampling, sampleInterleaved, type TimedSide } from './sampler.ts';
export { type LatencyStats, latencyStats, median, percentile } from './stats.ts';
export { countStoreCalls } from './store-calls.ts';
export { formatTable } from './table.ts';
export { printScaleReport, seedScaleSessions, sweepIdleSessions, timeOperation } from './time-operation.ts';
export {
  compareVariants,
  formatVariants,
  machineLine,
  storeAndFloorVariants,
  type VariantResult,
} from './variants.ts';
export { MIN_PAYLOAD_BYTES } from './workload.ts';
