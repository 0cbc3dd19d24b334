/**
 * Runs `fn` with this process's wall clock (`Date.now()`, `new Date()`) moved by `offsetMs`, as if
 * the machine's clock were wrong; the monotonic clock (`performance.now()`) is left alone. The
 * clock is restored even when `fn` throws.
 */
export async function withWallClock<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const RealDate = globalThis.Date;
  class OffsetDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...(args as [string | number]));
    }
    static override now(): number {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = OffsetDate as DateConstructor;
  try {
    return await fn();
  } finally {
    globalThis.Date = RealDate;
  }
}
