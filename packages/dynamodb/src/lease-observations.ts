import { type LeaseSighting, sameSighting } from './lease-record.ts';

interface Observation {
  sighting: LeaseSighting;
  /** On this store's monotonic clock: when the record was first seen exactly like this. */
  sinceMs: number;
  /** How long it must stay unchanged before this store may take it. */
  forMs: number;
}

/**
 * Sessions remembered at most; beyond it the oldest sighting is forgotten first. Forgetting one
 * only restarts its watch (a longer wait), never shortens it.
 */
const MAX_OBSERVATIONS = 10_000;

/**
 * One store instance's memory of the lease records it has seen held by others, so the taker rule
 * needs no clock agreement: a lease may be taken once this store has watched the same record
 * (holder, epoch, expiry, version) stay unchanged for a full TTL on its own monotonic clock. The
 * memory outlives a single acquire, so the polls of one waiting run add up to one watch.
 */
export interface LeaseObservations {
  /**
   * Records a sighting of the lease held by another and returns the ms left until it has been
   * watched for `forMs` (≤ 0: it has). A sighting unlike the last one starts a new watch now.
   */
  watch(sessionId: string, sighting: LeaseSighting, forMs: number): number;
  /** The sighting watched unchanged for its full time, which the next acquire may take. */
  ripe(sessionId: string): LeaseSighting | null;
  /**
   * This store wrote the record (a grant or renewal that answered): it is watched from now. The
   * holder counts its lease from before the write was sent, so it gives up before the watch ends.
   */
  wrote(sessionId: string, sighting: LeaseSighting, ttlMs: number): void;
  forget(sessionId: string): void;
}

export function leaseObservations(now: () => number = () => performance.now()): LeaseObservations {
  const seen = new Map<string, Observation>();
  const remember = (sessionId: string, observation: Observation) => {
    seen.delete(sessionId);
    seen.set(sessionId, observation);
    if (seen.size > MAX_OBSERVATIONS) seen.delete(seen.keys().next().value!);
  };
  return {
    watch(sessionId, sighting, forMs) {
      const at = now();
      let observation = seen.get(sessionId);
      if (!observation || !sameSighting(observation.sighting, sighting)) {
        observation = { sighting, sinceMs: at, forMs };
        remember(sessionId, observation);
      }
      return observation.sinceMs + observation.forMs - at;
    },
    ripe(sessionId) {
      const observation = seen.get(sessionId);
      if (!observation || now() - observation.sinceMs < observation.forMs) return null;
      return observation.sighting;
    },
    wrote(sessionId, sighting, ttlMs) {
      remember(sessionId, { sighting, sinceMs: now(), forMs: ttlMs });
    },
    forget(sessionId) {
      seen.delete(sessionId);
    },
  };
}
