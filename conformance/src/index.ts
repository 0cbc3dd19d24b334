/**
 * The conformance kit: contract specs, crash matrix, perf gates (counts; time ratios live in @agentstore/bench).
 * @module @agentstore/conformance
 */

// What a target module's author needs (a target on a server it opens and closes), from one place.
export {
  openTargetModule,
  openToolTarget,
  roundTripCounters,
  type TargetServer,
  targetFromModule,
  targetOnServer,
  withServer,
} from '@agentstore/core/testing';
export {
  assertContiguous,
  assertUnchanged,
  ConformanceViolation,
  expectStoreError,
  NOT_ATOMIC_CAUSE,
  type SessionSnapshot,
  snapshot,
} from './assertions.ts';
export {
  applicableChecks,
  type Capability,
  type CheckContext,
  type ConformanceCheck,
  type ConformanceSpec,
  describeSpec,
  offeredCapabilities,
} from './check.ts';
export { conformanceSpecs, describeAgentStoreConformance } from './describe.ts';
export {
  type HostileAppend,
  hostileAppends,
  LONE_SURROGATES,
  REPLACEMENT_TWIN,
  type ShiftingAppend,
  shiftingAppends,
} from './hostile-values.ts';
// For a harness that runs checks one by one (e.g. inside a worker): which sessions the kit wrote.
export { deleteCreated, trackSessions } from './session-tracker.ts';
// One export per spec: a `ConformanceSpec` ({ title, checks }) to register with
// `describeSpec(target, spec)` or to run check by check (`spec.checks`).
export { appendLoadSpec } from './specs/append-load.ts';
export { atomicitySpec } from './specs/atomicity.ts';
export { atomicityObservedSpec } from './specs/atomicity-observed.ts';
export { concurrencySpec } from './specs/concurrency.ts';
export { corruptRecordSpec } from './specs/corrupt-records.ts';
export { crashMatrixSpec } from './specs/crash-matrix.ts';
export { HOSTILE_TEXTS, hostileIdSpec } from './specs/hostile-ids.ts';
export { inputValidationSpec } from './specs/input-validation.ts';
export { isolationSpec } from './specs/isolation.ts';
export { leaseFaultSpec } from './specs/lease-faults.ts';
export { leaseSpec } from './specs/leases.ts';
export { limitSpec, MAX_TRIED_APPEND_BYTES, MIN_MAX_MESSAGE_BYTES } from './specs/limits.ts';
export { DEFAULT_LONG_SESSION_MESSAGES, longSessionSpec } from './specs/long-session.ts';
export { messagePartsSpec } from './specs/message-parts.ts';
export { perfGateSpec } from './specs/perf-gate.ts';
export { processTierSpec } from './specs/process-tier.ts';
export { retentionSpec } from './specs/retention.ts';
export { runLimitSpec } from './specs/run-limits.ts';
export type {
  ConformanceTarget,
  DurabilitySettings,
  OpenTestTarget,
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from './target.ts';
