import { formatBytes, formatCount, formatMicros, formatNumber, formatRatio } from './format.ts';
import { describeMachine } from './machine.ts';
import { type BenchReport, isMeasured, type MeasuredStore } from './report.ts';

/** Left-aligned first column, right-aligned numbers, two spaces between columns. */
function layout(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

const throughputAt = (result: MeasuredStore, level: number): string => {
  const found = result.concurrency.find((c) => c.concurrency === level);
  return found ? formatCount(found.stepsPerSecond) : '–';
};

/** The plain-text report: one row per measured store, then what was skipped, notes and the machine. */
export function formatTable(report: BenchReport): string {
  const { options } = report;
  const measured = report.stores.filter(isMeasured);
  const lines: string[] = [
    `agentstore-bench ${report.version}: append = 3 × ${options.payloadBytes} B messages with lease token and state; ` +
      `loop = ${options.steps} tool steps; ${options.sessions} sessions per concurrency level` +
      (options.quick ? ' (quick mode)' : ''),
    '',
  ];
  if (measured.length) {
    const header = [
      'store',
      'append p50',
      'p99',
      'mean',
      'floor p50',
      'vs floor',
      'RT/append',
      'floor RT',
      'loop +/step',
      'loop ×',
      ...options.concurrency.map((level) => `steps/s c=${level}`),
      'bytes/step',
    ];
    const rows = measured.map((r) => [
      r.store,
      formatMicros(r.append.p50Us),
      formatMicros(r.append.p99Us),
      formatMicros(r.append.meanUs),
      r.floor ? formatMicros(r.floor.p50Us) : '–',
      r.floorRatio !== null ? formatRatio(r.floorRatio) : '–',
      `${formatNumber(r.roundTrips.perAppend)}${r.roundTrips.method === 'store-calls' ? '*' : ''}`,
      r.roundTrips.floorPerAppend !== null ? formatNumber(r.roundTrips.floorPerAppend) : '–',
      formatMicros(r.loop.overheadPerStepUs),
      formatRatio(r.loop.ratio),
      ...options.concurrency.map((level) => throughputAt(r, level)),
      formatBytes(r.bytes.perStep),
    ]);
    lines.push(...layout([header, ...rows]), '');
  }
  for (const r of report.stores) {
    if (!isMeasured(r)) lines.push(`${r.store}: ${r.status} — ${r.reason}`);
  }
  if (measured.length !== report.stores.length) lines.push('');

  lines.push(
    'vs floor: append p50 / the raw driver’s cheapest correct append of the same rows (hand-written per adapter).',
    'RT/append: round trips per append counted at the driver; * = store calls counted (no driver to reach).',
    'loop +/step: (durable run p50 − stateless run p50) / steps; loop ×: durable p50 / stateless p50.',
    'bytes/step: stored message JSON per step plus the session record.',
  );
  for (const r of measured) {
    lines.push(`${r.store}: ${r.server}; RT = ${r.roundTrips.unit}`);
    for (const note of r.notes) lines.push(`  note: ${note}`);
  }
  lines.push('', `Machine: ${describeMachine(report.machine)}`, report.note);
  return `${lines.join('\n')}\n`;
}
