/**
 * agentstore-bench as a library: measure stores side by side, render the table and the chart.
 * @module @agentstore/bench
 */
export { renderChart } from './chart.ts';
export { formatBytes, formatCount, formatMicros, formatRatio } from './format.ts';
export { type HistorySampling, measureHistory } from './history.ts';
export { measureLongLoad } from './long-load.ts';
export {
  describeMachine,
  type MachineInfo,
  type MachineSnapshot,
  machineInfo,
  machineSnapshot,
  type StorageInfo,
  storageOf,
} from './machine.ts';
export {
  formatRatioSpread,
  formatSpread,
  README_MARKERS,
  RESULTS_MARKERS,
  type ResultsMarkdownOptions,
  replaceBetween,
  resultsMarkdown,
  storeMarkdown,
} from './markdown.ts';
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
  measurePerfStep,
  PERF_DEFAULTS,
  type PerfSampling,
  type PerfVerdict,
  perfVerdicts,
} from './perf/ratios.ts';
export { createProgress, overallFraction, type ProgressReporter, type ProgressStream } from './progress.ts';
export {
  type BackendSettings,
  type BenchReport,
  HEADLINE_TARGET,
  type HistoryRow,
  isMeasured,
  type MeasuredStore,
  REPORT_NOTE,
  type RoundTrips,
  type StoreResult,
  type UnmeasuredStore,
} from './report.ts';
export { measureRoundTrips } from './round-trips.ts';
export {
  perRoundRatio,
  type RatioSpread,
  type RoundSampling,
  ratioSpread,
  type Spread,
  sampleRounds,
  spreadMs,
} from './rounds.ts';
export { type BenchHooks, type BenchProgress, runBench } from './run-bench.ts';
export { type InterleavedSampling, roundOrders, sampleInterleaved, type TimedSide } from './sampler.ts';
export { type LatencyStats, latencyStats, median, percentile } from './stats.ts';
export {
  type FloorSteps,
  floorSession,
  floorWriter,
  marginalCosts,
  measureStep,
  type StepResult,
  type StepSampling,
} from './step.ts';
export { countStoreCalls } from './store-calls.ts';
export { formatTable } from './table.ts';
export {
  measureThroughput,
  type RateSpread,
  type ThroughputResult,
  type ThroughputSampling,
} from './throughput.ts';
export { printScaleReport, seedScaleSessions, sweepIdleSessions, timeOperation } from './time-operation.ts';
export {
  compareVariants,
  formatVariants,
  machineLine,
  storeAndFloorVariants,
  type VariantResult,
} from './variants.ts';
export { LOW_THROUGHPUT_RATIO, verdictLine, verdictLines, worstThroughput } from './verdict.ts';
export {
  fixedLatencyLlm,
  MIN_PAYLOAD_BYTES,
  type ModelMeter,
  newModelMeter,
  stepMessages,
} from './workload.ts';
