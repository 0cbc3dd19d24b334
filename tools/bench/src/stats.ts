/** Latency of one timed operation over its samples, in microseconds (0.1 µs resolution). */
export interface LatencyStats {
  samples: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
}

/** Rounds to 0.1 (µs) or to `digits` decimals, so reports stay readable. */
export const round = (value: number, digits = 1): number => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

export const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

export const mean = (values: number[]): number => sum(values) / values.length;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (`q` in 0..1): with few samples, p99 is the slowest one. */
export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** p50 (the median), p99 and mean of durations given in milliseconds. */
export function latencyStats(durationsMs: number[]): LatencyStats {
  if (durationsMs.length === 0) throw new Error('latencyStats needs at least one sample');
  const average = mean(durationsMs);
  return {
    samples: durationsMs.length,
    p50Us: round(median(durationsMs) * 1000),
    p99Us: round(percentile(durationsMs, 0.99) * 1000),
    meanUs: round(average * 1000),
  };
}
