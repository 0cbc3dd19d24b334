/**
 * Resolves after `ms`, or rejects with `signal.reason` the moment `signal` aborts; the timer is
 * then cleared, so an aborted wait holds nothing open. The timer stays ref'd while it runs: a
 * process must not exit in the middle of a wait the run is still inside (an unref'd timer would
 * let Node quit with the run's promise never settled).
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
