/**
 * Prepares one timed call (untimed: building messages, ids) and returns the call to time.
 * What the returned function does is what the sample measures.
 */
export type TimedSide = () => () => Promise<unknown>;

export interface InterleavedSampling {
  /** Rounds run first and thrown away (connections, prepared statements, JIT). */
  warmup: number;
  /** Rounds kept. */
  samples: number;
  signal?: AbortSignal;
  /** After each kept round: how many are done. */
  onSample?: (done: number) => void;
}

/**
 * Times every side once per round, in an order that rotates each round (A B, B A, …), so drift in
 * the machine (other processes, the server's caches, a growing session) hits every side alike.
 * The generalisation of the perf gate's pairwise comparison to any number of sides, with every
 * sample kept (for p99 and the mean, not only the p50). Returns durations in ms, one array per side.
 */
export async function sampleInterleaved(
  sides: TimedSide[],
  { warmup, samples, signal, onSample }: InterleavedSampling,
): Promise<number[][]> {
  const times = sides.map((): number[] => []);
  for (let roundIndex = 0; roundIndex < warmup + samples; roundIndex++) {
    signal?.throwIfAborted();
    for (let k = 0; k < sides.length; k++) {
      const side = (roundIndex + k) % sides.length;
      const call = sides[side]!();
      const start = performance.now();
      await call();
      const elapsed = performance.now() - start;
      if (roundIndex >= warmup) times[side]!.push(elapsed);
    }
    if (roundIndex >= warmup) onSample?.(roundIndex - warmup + 1);
  }
  return times;
}
