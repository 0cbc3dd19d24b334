import { isAgentStoreError, LeaseLostError, SessionBusyError } from '../errors.ts';
import type { AgentStore, SessionInit } from '../store/contract.ts';
import { leaseSafetyMarginMs } from '../store/lease-rules.ts';
import { abortableSleep } from './abortable-sleep.ts';

/** A busy session is polled from this interval, doubling up to the cap, each with ±25% jitter. */
export const WAIT_POLL_MIN_MS = 25;
export const WAIT_POLL_MAX_MS = 250;
/** Extra attempts when `acquireLease`'s answer is lost (a dropped connection, a timeout). */
export const AMBIGUOUS_ACQUIRE_RETRIES = 2;

export interface AcquireInput {
  store: AgentStore;
  sessionId: string;
  holder: string;
  ttlMs: number;
  init: SessionInit;
  /** How long a busy holder is waited out (`leaseWaitMs`). */
  waitMs: number;
  /** The caller's signal: aborts the wait between polls and any attempt in flight. */
  signal: AbortSignal;
  /**
   * An attempt this run stopped waiting for (the caller aborted, or it went unanswered) and that
   * may still be granted: called with that attempt, so a late grant can be freed.
   */
  onAbandoned(attempt: Promise<{ epoch: number }>): void;
}

export interface Acquired {
  epoch: number;
  session: Awaited<ReturnType<AgentStore['acquireLease']>>['session'];
  /** `performance.now()` when the granting acquire was sent: the lease is measured from there. */
  sentAt: number;
}

/**
 * Acquires the lease, waiting out a busy holder for at most `waitMs`. A waiter polls (bounded,
 * jittered backoff, at most ~4 calls a second) instead of sleeping until the expiry it was told,
 * so a released lease is taken within a poll interval, not at the old expiry. An acquire whose
 * outcome is unknown is repeated with the same holder: the store re-grants a holder its own
 * lease, so a lost answer cannot leave the session blocked for a whole TTL.
 *
 * Each attempt is bounded by the lease's safe window (TTL − margin): a grant that answers later
 * would already be past its holder's local deadline, and a store call on a half-open connection
 * must not keep the run pending without a caller signal. Such an attempt is a LeaseLostError.
 */
export async function acquireWithin(input: AcquireInput): Promise<Acquired> {
  const { store, sessionId, holder, ttlMs, init, signal } = input;
  const safeWindowMs = ttlMs - leaseSafetyMarginMs(ttlMs);
  const started = performance.now();
  const deadline = started + input.waitMs;
  let poll = WAIT_POLL_MIN_MS;
  let ambiguous = 0;
  for (;;) {
    signal.throwIfAborted();
    const sentAt = performance.now();
    // Sent now, in this turn (a store that throws instead of rejecting counts as a rejection).
    const attempt = new Promise<Awaited<ReturnType<AgentStore['acquireLease']>>>((resolve) =>
      resolve(store.acquireLease(sessionId, { holder, ttlMs, init })),
    );
    let unanswered = false;
    try {
      const granted = await answerWithin(attempt, safeWindowMs, signal, () => {
        unanswered = true;
        return new LeaseLostError(
          { sessionId, holder, epoch: null },
          {
            cause: new Error(
              `acquireLease did not answer within the lease's safe window (${safeWindowMs} ms)`,
            ),
          },
        );
      });
      return { epoch: granted.epoch, session: granted.session, sentAt };
    } catch (error) {
      if (unanswered || signal.aborted) {
        // Not waited for to its answer: a late grant must still be freed.
        input.onAbandoned(attempt);
        throw unanswered ? error : signal.reason;
      }
      if (isAgentStoreError(error, 'SESSION_BUSY')) {
        const left = deadline - performance.now();
        if (left <= 0) {
          // Says whether run() waited, and what to pass to wait out a crashed holder's lease.
          throw new SessionBusyError(
            {
              sessionId,
              retryAfterMs: error.retryAfterMs,
              waitedMs: input.waitMs === 0 ? 0 : performance.now() - started,
            },
            { cause: error },
          );
        }
        const jittered = Math.round(poll * (0.75 + Math.random() * 0.5));
        await abortableSleep(Math.max(1, Math.min(error.retryAfterMs, jittered, left)), signal);
        poll = Math.min(WAIT_POLL_MAX_MS, poll * 2);
        continue;
      }
      // A typed refusal is definite; anything else may have been granted before the answer was lost.
      if (isAgentStoreError(error) || ambiguous >= AMBIGUOUS_ACQUIRE_RETRIES) throw error;
      ambiguous += 1;
      await abortableSleep(WAIT_POLL_MIN_MS * ambiguous, signal);
    }
  }
}

/**
 * Whether an acquire that failed may still have been granted: anything but a typed refusal. An
 * unexpected reply or an undecodable session can come after the grant was written.
 */
export function mayHaveBeenGranted(failure: unknown): boolean {
  return (
    !isAgentStoreError(failure) ||
    isAgentStoreError(failure, 'UNEXPECTED_REPLY') ||
    isAgentStoreError(failure, 'CORRUPT_RECORD')
  );
}

/**
 * Settles as `call` does, or rejects with `signal.reason` once `signal` aborts, or with `overdue()`
 * after `ms`. `call` is left to finish on its own. The timer stays ref'd: the run is still inside
 * this wait, and the process must not exit with its promise never settled.
 */
function answerWithin<T>(
  call: Promise<T>,
  ms: number,
  signal: AbortSignal,
  overdue: () => unknown,
): Promise<T> {
  if (signal.aborted) {
    // The caller gets the abort reason; what `call` ends with is moot, not an unhandled rejection.
    call.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      done();
      reject(overdue());
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
