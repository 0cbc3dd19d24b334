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
 * Math.random is involved. The seed is scrambled first (murmur3's finaliser) and the first
 * draws are thrown away: xorshift32 started from a small seed (rounds use 2, 3, 4, …) draws
 * near-zero numbers at first, which made every round's first order end the same way.
 */
export function roundOrders(sides: number, seed: number): () => number[] {
  let state = seed >>> 0;
  state = Math.imul(state ^ (state >>> 16), 0x85ebca6b) >>> 0;
  state = Math.imul(state ^ (state >>> 13), 0xc2b2ae35) >>> 0;
  state = (state ^ (state >>> 16)) >>> 0 || 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  for (let i = 0; i < 8; i++) next();
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
 * side behind the same one, which then always left it the same garbage and cache state: in one
 * comparison here, in one process, the store's write #1 read 1.29× the floor's with the rotation
 * (it always followed a run without a store) and 1.11× shuffled.
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
