/** 153 µs, 2.51 ms, 1.20 s: three significant figures or so, in the unit that reads best. */
export function formatMicros(us: number): string {
  // A difference of noisy times (the marginal step, the fixed cost) can come out below zero.
  if (us < 0) return `−${formatMicros(-us)}`;
  if (us < 1000) return `${us < 10 ? us.toFixed(1) : Math.round(us)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/** 1.13× */
export const formatRatio = (ratio: number): string => `${ratio < 10 ? ratio.toFixed(2) : ratio.toFixed(1)}×`;

/** 12,345 */
export const formatCount = (value: number): string =>
  Math.round(value).toLocaleString('en-US', { maximumFractionDigits: 0 });

/** 955 B, 12.3 KB */
export const formatBytes = (bytes: number): string =>
  bytes < 10_000 ? `${Math.round(bytes)} B` : `${(bytes / 1000).toFixed(1)} KB`;

/** Round-trip counts may be fractional medians; show whole numbers as such. */
export const formatNumber = (value: number): string =>
  Number.isInteger(value) ? String(value) : value.toFixed(1);
