/**
 * How a durable run waits on its store calls: each wait settles as its call does, or ends early
 * — at once when the lease is lost (`leaseLost`), or one event-loop turn after the caller aborted
 * (`caller`), or after the wait began when it already had. A store call on a half-open connection
 * (a partition: no error, no answer) must not keep such a run pending forever. The turn lets an
 * answer that has already arrived be taken — an in-process store answers within it — so a
 * cancelled run still records what the store committed. The call itself is left to finish on
 * its own.
 *
 * One listener on each signal for the whole run, not one per call: every append waits here,
 * and two listeners added and removed per call cost ~3 µs on every step's critical path.
 */
export interface StoreWaits {
  answer<T>(call: Promise<T>): Promise<T>;
  /**
   * Like `answer`, but the caller's abort does not end it: for an append of results whose
   * handlers finished (their effects happened), which is sent, and waited for, until it lands
   * or the lease ends (the keeper bounds a call that never answers).
   */
  whileHeld<T>(call: Promise<T>): Promise<T>;
  /** Unlinks from both signals (the run is over). */
  stop(): void;
}

export function storeWaits(caller: AbortSignal, leaseLost: AbortSignal): StoreWaits {
  /** Waits the caller's abort ends, and waits only a lost lease ends. */
  const waiting = new Set<(reason: unknown) => void>();
  const waitingOnLease = new Set<(reason: unknown) => void>();
  const endAll = (reason: unknown, which: Set<(reason: unknown) => void>) => {
    for (const end of [...which]) end(reason);
  };
  let callerTurn: ReturnType<typeof setTimeout> | undefined;
  const onLeaseLost = () => {
    endAll(leaseLost.reason, waiting);
    endAll(leaseLost.reason, waitingOnLease);
  };
  const onCallerAbort = () => {
    callerTurn = setTimeout(() => endAll(caller.reason, waiting), 0);
  };
  leaseLost.addEventListener('abort', onLeaseLost, { once: true });
  caller.addEventListener('abort', onCallerAbort, { once: true });

  const wait = <T>(call: Promise<T>, callerMayEnd: boolean): Promise<T> => {
    if (leaseLost.aborted) {
      // The run gets the abort reason; what `call` ends with is moot, not an unhandled rejection.
      call.catch(() => undefined);
      return Promise.reject(leaseLost.reason);
    }
    const set = callerMayEnd ? waiting : waitingOnLease;
    return new Promise<T>((resolve, reject) => {
      const end = (reason: unknown) => {
        set.delete(end);
        reject(reason);
      };
      set.add(end);
      // Began after the caller aborted: this wait gets its own turn.
      if (callerMayEnd && caller.aborted) setTimeout(() => end(caller.reason), 0);
      call.then(
        (value) => {
          set.delete(end);
          resolve(value);
        },
        (error: unknown) => {
          set.delete(end);
          reject(error);
        },
      );
    });
  };

  return {
    answer: (call) => wait(call, true),
    whileHeld: (call) => wait(call, false),
    stop() {
      leaseLost.removeEventListener('abort', onLeaseLost);
      caller.removeEventListener('abort', onCallerAbort);
      clearTimeout(callerTurn);
    },
  };
}
