import type { AgentStore } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';

/**
 * A second store on the same backend and data as the one being timed, built on a driver the
 * bench wraps, so round trips are counted where they happen. Kept apart from the timed store so
 * the counting never sits in the timed path.
 */
export interface CountedBackend {
  /** `driver`: counted at the driver; `store-calls`: no driver to reach, `store.*` calls counted. */
  method: 'driver' | 'store-calls';
  /** What one count is, in words, for the report. */
  unit: string;
  store: AgentStore;
  /** The adapter's floor on the same counted driver, when it publishes one. */
  floor: RawAppendFloor | null;
  /** Everything counted so far; callers take differences around the calls they measure. */
  count(): number;
  close(): Promise<void>;
}
