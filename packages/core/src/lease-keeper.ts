import { LeaseLostError } from './errors.ts';
import type { AgentStore, LeaseToken } from './store.ts';

/**
 * Renews the run's lease every third of its TTL while the run works. If the lease is lost, or
 * cannot be renewed before it expires, `onLost` aborts the run: fencing would refuse its next
 * append anyway, and handlers should stop early.
 */
export function keepLeaseAlive(options: {
  store: AgentStore;
  sessionId: string;
  lease: LeaseToken;
  ttlMs: number;
  onLost: (error: unknown) => void;
}): { stop(): void } {
  const { store, sessionId, lease, ttlMs, onLost } = options;
  let expiresAt = Date.now() + ttlMs;
  let stopped = false;
  let inFlight = false;
  const timer = setInterval(
    () => {
      if (stopped || inFlight) return;
      inFlight = true;
      store
        .renewLease(sessionId, { ...lease, ttlMs })
        .then((renewed) => {
          expiresAt = Date.parse(renewed.expiresAt);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          if (error instanceof LeaseLostError || Date.now() >= expiresAt) {
            stopped = true;
            clearInterval(timer);
            onLost(error);
          }
          // Otherwise a passing fault: the next tick retries before the lease can expire.
        })
        .finally(() => {
          inFlight = false;
        });
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  // Node timers can be unref'd so a forgotten run never holds the process open; Workers' cannot.
  (timer as { unref?: () => void }).unref?.();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
