/**
 * The conformance kit: contract specs, crash matrix, perf gates (counts; time ratios live in @agentstore/bench).
 * @module @agentstore/conformance
 */

export { openTargetModule, openToolTarget, targetFromModule } from '@agentstore/core/testing';
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
export { appendLoadChecks, appendLoadSpec, describeAppendLoad } from './specs/append-load.ts';
export { atomicityChecks, atomicitySpec, describeAtomicity } from './specs/atomicity.ts';
export {
  atomicityObservedChecks,
  atomicityObservedSpec,
  describeAtomicityObserved,
} from './specs/atomicity-observed.ts';
export { concurrencyChecks, concurrencySpec, describeConcurrency } from './specs/concurrency.ts';
export { corruptRecordChecks, corruptRecordSpec, describeCorruptRecords } from './specs/corrupt-records.ts';
export { crashMatrixChecks, crashMatrixSpec, describeCrashMatrix } from './specs/crash-matrix.ts';
export { describeHostileIds, HOSTILE_TEXTS, hostileIdChecks, hostileIdSpec } from './specs/hostile-ids.ts';
export { describeIsolation, isolationChecks, isolationSpec } from './specs/isolation.ts';
export { describeLeaseFaults, leaseFaultChecks, leaseFaultSpec } from './specs/lease-faults.ts';
export { describeLeases, leaseChecks, leaseSpec } from './specs/leases.ts';
export {
  boundaryChecks,
  describeLimits,
  limitChecks,
  limitSpec,
  MIN_MAX_MESSAGE_BYTES,
} from './specs/limits.ts';
export {
  DEFAULT_LONG_SESSION_MESSAGES,
  describeLongSessions,
  longSessionChecks,
  longSessionSpec,
} from './specs/long-session.ts';
export { messagePartsSpec } from './specs/message-parts.ts';
export { describePerfGate, perfGateChecks, perfGateSpec } from './specs/perf-gate.ts';
export { describeProcessTier, processTierChecks, processTierSpec } from './specs/process-tier.ts';
export { describeRetention, retentionChecks, retentionSpec } from './specs/retention.ts';
export { describeRunLimits, runLimitChecks, runLimitSpec } from './specs/run-limits.ts';
export type {
  ConformanceTarget,
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from './target.ts';
