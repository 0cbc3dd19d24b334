import { type AgentStoreError, isAgentStoreError, LeaseLostError } from '../errors.ts';
import type { AgentStore, LeaseToken } from '../store/contract.ts';
import { leaseSafetyMarginMs } from '../store/lease-rules.ts';
import { isGone, type LeaseEvent, type LeaseMachine, leaseMachine } from './lease-state.ts';

/**
 * The holder's side of the lease (the Chubby / etcd rule): the lease is measured on this process's
 * monotonic clock from the moment the acquire or renewal that granted it was *sent* — the store
 * cannot have started its TTL earlier — and ends `leaseSafetyMarginMs(ttl)` before the store's
 * would. At that local deadline the run is aborted with a `LeaseLostError`, and `assertHeld()`
 * refuses anything new (handler, reconcile, append) from then on, whether or not the abort timer
 * has fired yet. Only a renewal that *answers* moves the deadline, to its own send time + TTL −
 * margin; a hung or failing renewal never extends it, so no partition can keep this worker
 * running past the moment another may take over.
 */
export interface LeaseKeeper {
  /**
   * Throws (and aborts the run) once the local deadline has passed, the store said the lease is
   * gone, or the holder gave it up (see `watch`).
   */
  assertHeld(): void;
  /**
   * Settles as `call` does, unless `call` stays unanswered for the lease's safe window (TTL −
   * margin, counted from now): then the holder gives the lease up — no renewal is sent from then
   * on, so it lapses in the store and epoch fencing refuses `call` should it land later — the run
   * is aborted with `overdue()`, and the returned promise rejects with it. A store call on a
   * half-open pooled connection never answers while renewals, on another connection, still do:
   * without this the run would wait forever, renewing, and block the session. A call that answers
   * within the window, however slowly, is untouched.
   */
  watch<T>(call: Promise<T>, overdue: () => AgentStoreError): Promise<T>;
  /**
   * The store refused one of this holder's calls as a lost lease (an append): the lease is lost
   * now, not at the next renewal. The run is aborted at once and `assertHeld` refuses from here,
   * so no handler starts, and none passes its signal check, after the store said so.
   */
  lost(error: AgentStoreError): void;
  stop(): void;
}

/**
 * Every timer here waits at most `ttlMs` (the deadline is a send time, never in the future, plus
 * less than `ttlMs`), and run() only starts a keeper for a TTL checked to be at most
 * `MAX_LEASE_TTL_MS` (24 h, by `validateTtlMs` in `checkRunOptions`), far below the 2^31 − 1 ms
 * above which Node and browsers would fire a timer at once: no delay needs clamping.
 */
export function keepLeaseAlive(options: {
  store: AgentStore;
  sessionId: string;
  lease: LeaseToken;
  ttlMs: number;
  /** `performance.now()` when the acquire that granted the lease was sent. */
  sentAt: number;
  /**
   * The run's lease state, which the keeper reads (is it releasing? gone?) and moves (refused,
   * deadline passed). Without it (the keeper's own tests) the keeper makes one, calling `onLost`.
   */
  machine?: LeaseMachine;
  /** The lease is gone: lost (`LeaseLostError`) or given up over an unanswered call (`watch`). */
  onLost?: (error: AgentStoreError) => void;
  /** The monotonic clock; `performance.now` unless a test fakes it. */
  now?: () => number;
  /**
   * The wall clock; `Date.now` unless a test fakes it. The monotonic clock stops while the machine
   * is suspended (laptop sleep, a paused VM) though the database's clock does not, so the lease
   * also ends when the wall clock says so: whichever clock runs out first wins. A wall clock that
   * steps back cannot extend the lease; one that steps forward only ends it early.
   */
  wallNow?: () => number;
}): LeaseKeeper {
  const { store, sessionId, lease, ttlMs } = options;
  const onLost = options.onLost ?? (() => undefined);
  const machine = options.machine ?? leaseMachine(onLost);
  const now = options.now ?? (() => performance.now());
  const validFor = ttlMs - leaseSafetyMarginMs(ttlMs);
  const renewEvery = Math.max(1, Math.floor(ttlMs / 4));
  const wallNow = options.wallNow ?? (() => Date.now());
  // The local deadline on each clock, moved only by a renewal that answered in time.
  let deadline = options.sentAt + validFor;
  let wallDeadline = wallNow() - (now() - options.sentAt) + validFor;
  const passed = () => now() >= deadline || wallNow() >= wallDeadline;
  /** The error the lease was lost or given up with, from the one source of truth. */
  const goneWith = (): AgentStoreError | null => {
    const state = machine.state;
    return isGone(state) ? state.error : null;
  };
  // Timers only: once stopped, no renewal or deadline timer runs (the lease's state is the machine's).
  let stopped = false;
  // The last renewal's failure, reported as the cause when the deadline passes.
  let lastError: unknown = null;
  // The two timers, cleared by stop().
  let renewTimer: ReturnType<typeof setTimeout> | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;

  const leaseLost = (cause?: unknown) =>
    isAgentStoreError(cause, 'LEASE_LOST')
      ? cause
      : new LeaseLostError(
          { sessionId, holder: lease.holder, epoch: lease.epoch },
          cause === undefined ? undefined : { cause },
        );

  /** Moves the lease's state; once it is gone, no timer of this keeper runs any more. */
  const lose = (event: Extract<LeaseEvent, { error: AgentStoreError }>) => {
    if (isGone(machine.dispatch(event))) stop();
  };

  const expire = () => {
    const reason =
      lastError === null
        ? new Error(`no renewal answered within ${validFor} ms of the last grant (local lease deadline)`)
        : lastError;
    lose({ type: 'deadline-passed', error: leaseLost(reason) });
  };

  const armDeadline = () => {
    clearTimeout(deadlineTimer);
    const wait = Math.max(0, Math.ceil(deadline - now()));
    deadlineTimer = setTimeout(() => {
      if (stopped) return;
      if (passed()) expire();
      else armDeadline();
    }, wait);
    unref(deadlineTimer);
  };

  const renew = () => {
    if (stopped) return;
    // A blocked event loop can run this overdue timer before the deadline's: a renewal sent now
    // would re-extend, in the store, a lease this holder has already given up.
    if (passed()) {
      expire();
      return;
    }
    const sentAt = now();
    const sentWall = wallNow();
    // Renewals are not serialised: one that hangs (a half-open connection) must not hold back
    // the next, which may reach the store another way. At most ~4 can be in flight per TTL.
    // (A store that throws instead of rejecting, or answers a plain value, counts the same way:
    // never an exception thrown from this timer.)
    new Promise((resolve) => resolve(store.renewLease(sessionId, { ...lease, ttlMs }))).then(
      () => {
        if (stopped) return;
        lastError = null;
        // An answer that arrives after the deadline is too late: the run is already aborted, even
        // when a blocked event loop has not let the deadline timer fire yet.
        if (goneWith() === null && !passed() && sentAt + validFor > deadline) {
          deadline = sentAt + validFor;
          wallDeadline = sentWall + validFor;
          armDeadline();
        }
      },
      (error: unknown) => {
        if (stopped) return;
        if (isAgentStoreError(error, 'LEASE_LOST')) {
          // (Ignored by the machine while the run is releasing: that release may have landed first.)
          lose({ type: 'refused', by: 'renewal', error });
          if (goneWith() !== null) return;
        }
        lastError = error; // a passing fault: the next renewal retries while the deadline allows
      },
    );
    renewTimer = setTimeout(renew, renewEvery);
    unref(renewTimer);
  };

  function stop() {
    stopped = true;
    clearTimeout(renewTimer);
    clearTimeout(deadlineTimer);
  }

  renewTimer = setTimeout(renew, renewEvery);
  unref(renewTimer);
  armDeadline();

  return {
    assertHeld() {
      if (goneWith() === null && passed()) expire();
      const gone = goneWith();
      if (gone !== null) throw gone;
    },
    watch(call, overdue) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          // Once the run is over (stopped) there is no lease left to give up, only a wait to end.
          const error = goneWith() ?? overdue();
          if (!stopped) lose({ type: 'deadline-passed', error });
          reject(error);
        }, validFor);
        unref(timer);
        call.then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
      });
    },
    lost: (error) => lose({ type: 'refused', by: 'append', error }),
    stop,
  };
}

/** Node timers can be unref'd so a forgotten run never holds the process open; Workers' cannot. */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
