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
  /** Seeds the order of the sides in each round (`roundOrders`); default 1. */
  seed?: number;
}

/**
 * The order each round runs the sides in: a shuffle drawn from a xorshift32 generator seeded with
 * `seed`, so the same seed gives the same orders (a run can be repeated) and no wall clock or
 * Math.random is involved.
 */
export function roundOrders(sides: number, seed: number): () => number[] {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  return () => {
    const order = Array.from({ length: sides }, (_, i) => i);
    for (let i = sides - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order;
  };
}

/**
 * Times every side once per round, in a fresh shuffled order each round (`roundOrders`), so drift
 * in the machine (other processes, the server's caches, a growing session) hits every side alike,
 * and no side always runs right after the same neighbour. A rotation (A B C, B C A, …) kept each
 * side behind the same one, which then always left it the same garbage and cache state: measured
 * here, the store's write #1 read 1.29× the floor's with the rotation (it always followed a run
 * without a store) and 1.11× shuffled, in the same process.
 * The generalisation of the perf gate's pairwise comparison to any number of sides, with every
 * sample kept (for p99 and the mean, not only the p50). Returns durations in ms, one array per side.
 */
export async function sampleInterleaved(
  sides: TimedSide[],
  { warmup, samples, signal, onSample, seed = 1 }: InterleavedSampling,
): Promise<number[][]> {
  const times = sides.map((): number[] => []);
  const nextOrder = roundOrders(sides.length, seed);
  for (let roundIndex = 0; roundIndex < warmup + samples; roundIndex++) {
    signal?.throwIfAborted();
    for (const side of nextOrder()) {
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
