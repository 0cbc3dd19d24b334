const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;

/**
 * Starts `task` on the next turn of the event loop (`setImmediate` where there is one, else a
 * zero timer), after every microtask and `process.nextTick` callback queued so far. A store's
 * append sends its request from that chain (pg hands a pooled client over in a nextTick, which
 * runs only once the microtask queue is empty): work started here does not delay the send.
 */
export function onNextTurn<T>(task: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => {
    const start = () => resolve(task());
    if (immediate) immediate(start);
    else setTimeout(start, 0);
  });
}
