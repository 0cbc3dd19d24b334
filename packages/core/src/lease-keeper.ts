import { isAgentStoreError, LeaseLostError } from './errors.ts';
import type { AgentStore, LeaseToken } from './store.ts';

/**
 * Renews the run's lease every third of its TTL while the run works. The lease counts as valid
 * until `ttlMs` after the *sending* of the last successful grant or renewal (never later than the
 * store's own expiry). The run is aborted with a `LeaseLostError` when the store says the lease is
 * gone, when renewals keep failing past that point, or when one renewal hangs longer than a whole
 * TTL (a half-open connection): another worker may hold the lease by then, fencing would refuse
 * the next append anyway, and handlers should stop. A renewal that is merely slow but succeeds
 * does not abort the run: an expired lease nobody took over still fences correctly by epoch.
 * TTLs under `MIN_PATIENCE_MS` (test settings) get that much patience, so a loaded machine's
 * slow round trip is not mistaken for a lost lease.
 */
const MIN_PATIENCE_MS = 5_000;

export function keepLeaseAlive(options: {
  store: AgentStore;
  sessionId: string;
  lease: LeaseToken;
  ttlMs: number;
  /** When the acquire that granted the lease was sent (Date.now()). */
  grantedAt: number;
  onLost: (error: LeaseLostError) => void;
}): { stop(): void } {
  const { store, sessionId, lease, ttlMs, onLost } = options;
  const patienceMs = Math.max(ttlMs, MIN_PATIENCE_MS);
  // When the last successful grant or renewal was sent: the lease is ours until ttlMs after it.
  let confirmedAt = options.grantedAt;
  let stopped = false;
  let inFlightSince: number | null = null;
  let lastError: unknown = null;

  const lose = (cause: unknown) => {
    if (stopped) return;
    stop();
    onLost(
      isAgentStoreError(cause, 'LEASE_LOST')
        ? cause
        : new LeaseLostError({ sessionId, holder: lease.holder, epoch: lease.epoch }, { cause }),
    );
  };

  const tick = () => {
    if (stopped) return;
    const now = Date.now();
    if (inFlightSince !== null) {
      if (now - inFlightSince >= patienceMs) {
        lose(new Error(`a lease renewal has not answered for ${now - inFlightSince} ms`));
      }
      return;
    }
    if (lastError !== null && now - confirmedAt >= patienceMs) return lose(lastError);
    inFlightSince = now;
    const sentAt = now;
    store
      .renewLease(sessionId, { ...lease, ttlMs })
      .then(() => {
        confirmedAt = sentAt;
        lastError = null;
      })
      .catch((error: unknown) => {
        if (isAgentStoreError(error, 'LEASE_LOST')) lose(error);
        else lastError = error; // a passing fault: the next tick retries while the lease is still valid
      })
      .finally(() => {
        inFlightSince = null;
      });
  };

  const timer = setInterval(tick, Math.max(1, Math.floor(ttlMs / 3)));
  // Node timers can be unref'd so a forgotten run never holds the process open; Workers' cannot.
  (timer as { unref?: () => void }).unref?.();
  function stop() {
    stopped = true;
    clearInterval(timer);
  }
  return { stop };
}
