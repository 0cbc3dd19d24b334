import type { BenchProgress } from './run-bench.ts';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressReporter {
  update(progress: BenchProgress): void;
  /** Clears the bar (TTY) so the table prints on a clean line. */
  finish(): void;
}

const BAR_WIDTH = 24;
/** Redraws at most this often: a bar must not cost the benchmark its CPU. */
const REDRAW_MS = 100;

/** 0..1 across the whole run: stores, then phases within a store, then samples within a phase. */
export function overallFraction(p: BenchProgress): number {
  const finished = p.phase === 'done' || p.phase === 'skipped' || p.phase === 'failed';
  const inStore = finished
    ? 1
    : p.phase === 'starting'
      ? 0
      : (p.phaseIndex + (p.total > 0 ? Math.min(1, p.done / p.total) : 0)) / p.phaseCount;
  return Math.min(1, (p.storeIndex + inStore) / p.storeCount);
}

const describePhase = (p: BenchProgress): string =>
  p.phase === 'starting' ? 'starting the server' : p.total > 1 ? `${p.phase} ${p.done}/${p.total}` : p.phase;

/**
 * A one-line bar redrawn in place when the stream is a terminal; otherwise one plain line per
 * store and phase, so logs (CI) stay readable.
 */
export function createProgress(stream: ProgressStream): ProgressReporter {
  const tty = stream.isTTY === true;
  let lastDraw = 0;
  let lastLine = '';
  let drawn = false;
  return {
    update(p) {
      const position = `${p.store} (${p.storeIndex + 1}/${p.storeCount})`;
      if (!tty) {
        const line =
          p.phase === 'skipped' || p.phase === 'failed'
            ? `agentstore-bench: ${position} ${p.phase}: ${p.reason ?? ''}`
            : `agentstore-bench: ${position} ${p.phase === 'starting' ? 'starting the server' : p.phase}`;
        if (line !== lastLine && (p.done === 0 || p.phase === 'done' || p.reason !== undefined)) {
          lastLine = line;
          stream.write(`${line}\n`);
        }
        return;
      }
      if (p.reason !== undefined) {
        stream.write(`\r\x1b[2K${p.store}: ${p.phase} — ${p.reason}\n`);
        drawn = false;
        return;
      }
      const now = performance.now();
      if (now - lastDraw < REDRAW_MS && p.done !== p.total) return;
      lastDraw = now;
      const fraction = overallFraction(p);
      const filled = Math.round(fraction * BAR_WIDTH);
      const bar = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`;
      const line = `${bar} ${String(Math.round(fraction * 100)).padStart(3)}%  ${position}: ${describePhase(p)}`;
      // Terminals that report no width (0 or undefined, e.g. some CI ptys) get the whole line.
      const columns = stream.columns ?? 0;
      stream.write(`\r\x1b[2K${columns > 1 ? line.slice(0, columns - 1) : line}`);
      drawn = true;
    },
    finish() {
      if (tty && drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
