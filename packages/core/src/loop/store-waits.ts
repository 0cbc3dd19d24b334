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
  /** Unlinks from both signals (the run is over). */
  stop(): void;
}

export function storeWaits(caller: AbortSignal, leaseLost: AbortSignal): StoreWaits {
  const waiting = new Set<(reason: unknown) => void>();
  const endAll = (reason: unknown) => {
    for (const end of [...waiting]) end(reason);
  };
  let callerTurn: ReturnType<typeof setTimeout> | undefined;
  const onLeaseLost = () => endAll(leaseLost.reason);
  const onCallerAbort = () => {
    callerTurn = setTimeout(() => endAll(caller.reason), 0);
  };
  leaseLost.addEventListener('abort', onLeaseLost, { once: true });
  caller.addEventListener('abort', onCallerAbort, { once: true });

  return {
    answer<T>(call: Promise<T>): Promise<T> {
      if (leaseLost.aborted) {
        // The run gets the abort reason; what `call` ends with is moot, not an unhandled rejection.
        call.catch(() => undefined);
        return Promise.reject(leaseLost.reason);
      }
      return new Promise<T>((resolve, reject) => {
        const end = (reason: unknown) => {
          waiting.delete(end);
          reject(reason);
        };
        waiting.add(end);
        // Began after the caller aborted: this wait gets its own turn.
        if (caller.aborted) setTimeout(() => end(caller.reason), 0);
        call.then(
          (value) => {
            waiting.delete(end);
            resolve(value);
          },
          (error: unknown) => {
            waiting.delete(end);
            reject(error);
          },
        );
      });
    },
    stop() {
      leaseLost.removeEventListener('abort', onLeaseLost);
      caller.removeEventListener('abort', onCallerAbort);
      clearTimeout(callerTurn);
    },
  };
}
