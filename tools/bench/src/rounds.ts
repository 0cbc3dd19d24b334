import { sampleInterleaved, type TimedSide } from './sampler.ts';
import { median, round } from './stats.ts';

/**
 * A time figure over repeated rounds: the median of the rounds' medians, and the spread (the
 * lowest and highest round median), so a reader sees how much the machine moved it.
 */
export interface Spread {
  /** Median of the round medians, µs. */
  p50Us: number;
  /** Lowest round median, µs. */
  minUs: number;
  /** Highest round median, µs. */
  maxUs: number;
  rounds: number;
  /** Samples behind each round median. */
  samplesPerRound: number;
}

/** A ratio per round, summarised the same way (median, lowest, highest). */
export interface RatioSpread {
  median: number;
  min: number;
  max: number;
}

export interface RoundSampling {
  rounds: number;
  /** Samples of every side per round. */
  samples: number;
  /** Samples of every side run once before the first round and thrown away. */
  warmup: number;
  signal?: AbortSignal;
  /** After each round: how many are done. */
  onRound?: (done: number) => void;
}

/**
 * Every side sampled in every round, interleaved within the round (a shuffled order each
 * sample), so drift hits every side alike. Returns per side its round medians in ms.
 */
export async function sampleRounds(sides: TimedSide[], sampling: RoundSampling): Promise<number[][]> {
  const { rounds, samples, warmup, signal, onRound } = sampling;
  if (warmup > 0) await sampleInterleaved(sides, { warmup, samples: 0, ...(signal ? { signal } : {}) });
  const medians = sides.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    // Each round its own orders (the warm-up had seed 1).
    const times = await sampleInterleaved(sides, {
      warmup: 0,
      samples,
      seed: r + 2,
      ...(signal ? { signal } : {}),
    });
    times.forEach((sideTimes, side) => {
      medians[side]!.push(median(sideTimes));
    });
    onRound?.(r + 1);
  }
  return medians;
}

/** A `Spread` of per-round values given in ms. */
export function spreadMs(roundValuesMs: number[], samplesPerRound: number): Spread {
  if (roundValuesMs.length === 0) throw new Error('a spread needs at least one round');
  return {
    p50Us: round(median(roundValuesMs) * 1000),
    minUs: round(Math.min(...roundValuesMs) * 1000),
    maxUs: round(Math.max(...roundValuesMs) * 1000),
    rounds: roundValuesMs.length,
    samplesPerRound,
  };
}

export function ratioSpread(perRound: number[]): RatioSpread {
  return {
    median: round(median(perRound), 3),
    min: round(Math.min(...perRound), 3),
    max: round(Math.max(...perRound), 3),
  };
}

/** Per-round a ÷ b. */
export const perRoundRatio = (a: number[], b: number[]): number[] => a.map((value, i) => value / b[i]!);
