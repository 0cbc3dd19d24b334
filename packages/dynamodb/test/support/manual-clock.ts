import { vi } from 'vitest';

/**
 * Takes over this process's monotonic clock (`performance.now()`), which then moves only when
 * `advance` is called: a taker's watch of a lease is ordered by the test, not by how fast a busy
 * machine runs. Timers and the wall clock stay real. Undo with `vi.useRealTimers()`.
 */
export function manualMonotonicClock(): { advance(ms: number): void } {
  vi.useFakeTimers({ toFake: ['performance'] });
  return { advance: (ms) => vi.advanceTimersByTime(ms) };
}
