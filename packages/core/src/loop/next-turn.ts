const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;

/**
 * Starts `task` on the next turn of the event loop (`setImmediate` where there is one, else a
 * zero timer), after every microtask and `process.nextTick` callback queued so far, or once
 * `settled` settles if that comes first. A store's append sends its request from that chain (pg
 * hands a pooled client over in a nextTick, which runs only once the microtask queue is empty):
 * work started here does not delay the send. An append that is done at once (an in-process
 * store) starts it at once, without waiting for a turn.
 */
export function onNextTurn<T>(task: () => Promise<T>, settled?: Promise<unknown>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      // A task that throws instead of rejecting must not throw inside a timer callback.
      try {
        resolve(task());
      } catch (error) {
        reject(error);
      }
    };
    if (immediate) immediate(start);
    else setTimeout(start, 0);
    settled?.then(start, start);
  });
}
