import { type ConformanceSpec, describeSpec } from './check.ts';
import { appendLoadSpec } from './specs/append-load.ts';
import { atomicitySpec } from './specs/atomicity.ts';
import { atomicityObservedSpec } from './specs/atomicity-observed.ts';
import { concurrencySpec } from './specs/concurrency.ts';
import { corruptRecordSpec } from './specs/corrupt-records.ts';
import { crashMatrixSpec } from './specs/crash-matrix.ts';
import { hostileIdSpec } from './specs/hostile-ids.ts';
import { inputValidationSpec } from './specs/input-validation.ts';
import { isolationSpec } from './specs/isolation.ts';
import { leaseFaultSpec } from './specs/lease-faults.ts';
import { leaseSpec } from './specs/leases.ts';
import { limitSpec } from './specs/limits.ts';
import { longSessionSpec } from './specs/long-session.ts';
import { messagePartsSpec } from './specs/message-parts.ts';
import { perfGateSpec } from './specs/perf-gate.ts';
import { processTierSpec } from './specs/process-tier.ts';
import { retentionSpec } from './specs/retention.ts';
import { runLimitSpec } from './specs/run-limits.ts';
import type { ConformanceTarget } from './target.ts';

/** Every spec of the kit, in the order they run. */
export const conformanceSpecs: readonly ConformanceSpec[] = [
  appendLoadSpec,
  messagePartsSpec,
  atomicitySpec,
  atomicityObservedSpec,
  concurrencySpec,
  leaseSpec,
  leaseFaultSpec,
  limitSpec,
  inputValidationSpec,
  runLimitSpec,
  isolationSpec,
  corruptRecordSpec,
  hostileIdSpec,
  longSessionSpec,
  retentionSpec,
  crashMatrixSpec,
  processTierSpec,
  perfGateSpec,
];

/**
 * Registers the whole conformance kit for `target` as vitest suites, one per capability, each
 * with its own store. Call it at the top level of a test file. Checks that need a capability the
 * target does not declare (raw reader, corrupt, floor, durability, another process) are not
 * registered.
 */
export function describeAgentStoreConformance(target: ConformanceTarget): void {
  for (const spec of conformanceSpecs) describeSpec(target, spec);
}
