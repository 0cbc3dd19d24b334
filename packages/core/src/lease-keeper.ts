import { LeaseLostError } from './errors.ts';
import type { AgentStore, LeaseToken } from './store.ts';

/**
 * Renews the run's lease every third of its TTL while the run works. The lease is counted as
 * valid until `ttlMs` after the *sending* of the last successful grant or renewal (never later than
 * the store's own expiry), checked on every tick even while a renewal hangs. When the store says
 * the lease is gone, or it runs out before a renewal succeeds, `onLost` gets a `LeaseLostError`
 * and the run is aborted: fencing would refuse its next append anyway, and handlers should stop.
 */
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
  let validUntil = options.grantedAt + ttlMs;
  let stopped = false;
  let inFlight = false;
  let lastError: unknown = null;

  const lose = (cause: unknown) => {
    if (stopped) return;
    stop();
    onLost(
      cause instanceof LeaseLostError
        ? cause
        : new LeaseLostError({ sessionId, holder: lease.holder, epoch: lease.epoch }, { cause }),
    );
  };

  const tick = () => {
    if (stopped) return;
    if (Date.now() >= validUntil)
      return lose(lastError ?? new Error('the lease expired before it could be renewed'));
    if (inFlight) return;
    inFlight = true;
    const sentAt = Date.now();
    store
      .renewLease(sessionId, { ...lease, ttlMs })
      .then(() => {
        validUntil = sentAt + ttlMs;
        lastError = null;
      })
      .catch((error: unknown) => {
        if (error instanceof LeaseLostError) lose(error);
        else lastError = error; // a passing fault: the next tick retries while the lease is still valid
      })
      .finally(() => {
        inFlight = false;
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
