import { formatBytes, formatCount, formatMicros, formatNumber, formatRatio } from './format.ts';
import { describeMachine } from './machine.ts';
import {
  type BenchReport,
  HEADLINE_TARGET,
  isMeasured,
  type MeasuredStore,
  type RatioSpread,
  type Spread,
} from './report.ts';
import type { RateSpread } from './throughput.ts';
import { verdictLine, verdictLines } from './verdict.ts';

/** "1.23 ms (1.10–1.40)": the median of the round medians, then the lowest and highest round. */
export const formatSpread = (spread: Spread): string =>
  `${formatMicros(spread.p50Us)} (${formatMicros(spread.minUs)}–${formatMicros(spread.maxUs)})`;

export const formatRatioSpread = (ratio: RatioSpread): string =>
  `${formatRatio(ratio.median)} (${formatRatio(ratio.min)}–${formatRatio(ratio.max)})`;

const formatRate = (rate: RateSpread): string =>
  `${formatCount(rate.median)} (${formatCount(rate.min)}–${formatCount(rate.max)})`;

const table = (header: string[], rows: string[][]): string[] => [
  `| ${header.join(' | ')} |`,
  `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
  ...rows.map((row) => `| ${row.join(' | ')} |`),
];

function stepRows(stores: MeasuredStore[]): string[] {
  const header = [
    'store',
    '**durable overhead / step**',
    'one floor append, paced as a step',
    '**overhead ÷ paced floor append: pooled** (per round: median, lowest–highest)',
    'the same, each run’s first step counted too',
    'one floor append, made inside the same loop',
    'overhead ÷ in-loop floor append: pooled (per round)',
    'in-loop − paced floor append',
    'one floor append, back-to-back',
    'overhead ÷ back-to-back floor append',
    'write #1 via store',
    'store ÷ floor (back-to-back)',
    'from whole runs: marginal / step',
    'fixed overhead / run',
    'one-commit floor / step',
    'two-commit floor / step',
    'RT / run() step',
    'RT / append (floor)',
  ];
  const rows = stores.map((r) => {
    const rt = `${formatNumber(r.roundTrips.perAppend)}${r.roundTrips.method === 'store-calls' ? '*' : ''} (${
      r.roundTrips.floorPerAppend !== null ? formatNumber(r.roundTrips.floorPerAppend) : '–'
    })`;
    const s = r.step;
    const f = s.floor;
    return [
      r.store,
      `**${formatSpread(s.overheadPerStep)}**`,
      f ? formatSpread(f.pacedAppend) : '–',
      f
        ? `**${formatRatio(f.overheadVsPacedAppendPooled)}** (${formatRatioSpread(f.overheadVsPacedAppend)})`
        : '– (no floor)',
      f ? formatRatio(f.overheadAllStepsVsPacedAppendPooled) : '–',
      f ? formatSpread(f.inLoopAppend) : '–',
      f
        ? `${formatRatio(f.overheadVsInLoopAppendPooled)} (${formatRatioSpread(f.overheadVsInLoopAppend)})`
        : '–',
      f ? formatSpread(f.inLoopContext) : '–',
      f ? formatSpread(f.append) : '–',
      f ? formatRatioSpread(f.overheadVsAppend) : '–',
      formatSpread(s.storeAppend),
      f ? formatRatioSpread(f.storeAppendVsAppend) : '–',
      formatSpread(s.marginalPerStep),
      formatSpread(s.fixedPerRun),
      f ? formatSpread(f.oneCommit) : '–',
      f ? formatSpread(f.twoCommit) : '–',
      formatNumber(r.roundTrips.perStep),
      rt,
    ];
  });
  return table(header, rows);
}

function historyRows(stores: MeasuredStore[]): string[] {
  const header = [
    'store',
    'stored messages',
    'append',
    'load',
    'resume (1 load + steps)',
    'loop CPU / step',
    'bytes / step',
  ];
  const rows = stores.flatMap((r) =>
    r.history.map((h, i) => [
      i === 0 ? r.store : '',
      formatCount(h.messages),
      formatSpread(h.append),
      formatSpread(h.load),
      formatSpread(h.resume),
      formatSpread(h.loopCpuPerStep),
      formatBytes(h.bytesPerStep),
    ]),
  );
  return table(header, rows);
}

function throughputRows(report: BenchReport, stores: MeasuredStore[]): string[] {
  const levels = report.options.concurrency;
  const header = [
    'store',
    ...levels.flatMap((c) => [`c=${c} store`, `c=${c} floor`, `c=${c} store ÷ floor`]),
  ];
  const rows = stores.map((r) => [
    r.store,
    ...levels.flatMap((c) => {
      const t = r.throughput.find((x) => x.concurrency === c);
      if (!t) return ['–', '–', '–'];
      return [
        formatRate(t.store),
        t.floor ? formatRate(t.floor) : '–',
        t.storeVsFloor ? formatRatioSpread(t.storeVsFloor) : '–',
      ];
    }),
  ]);
  return table(header, rows);
}

function settingsLines(r: MeasuredStore): string[] {
  const settings = Object.entries(r.backend.settings)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  const storage = r.backend.storage
    ? `data dir on ${r.backend.storage.fsType} (${r.backend.storage.device} at ${r.backend.storage.mountPoint}, ${r.backend.storage.options})`
    : 'data dir not visible from the bench';
  return [
    `- **${r.store}**: ${r.server}; ${settings || 'no durability settings reported'}; ${storage}; RT = ${r.roundTrips.unit}.`,
    ...r.notes.map((note) => `  Note: ${note}`),
  ];
}

/** What the run was: options, machine, load at start and end. */
function provenance(report: BenchReport): string {
  const o = report.options;
  return (
    `Measured ${report.startedAt.slice(0, 10)} by agentstore-bench ${report.version}${o.quick ? ' in **quick mode (not for publishing)**' : ''} ` +
    `in ${(report.durationMs / 60_000).toFixed(1)} min: ${o.rounds} rounds; per round ${o.samples} samples of each headline side ` +
    `(a run of ${o.steps} or ${2 * o.steps} steps, or ${o.steps} appends), model latency ${o.modelLatencyMs} ms, ${o.payloadBytes} B of tool output per step; ` +
    `history ${o.historySizes.map(formatCount).join(' / ')} messages, ${o.historySamples} samples per round, resumed runs of ${o.resumeSteps} and ${2 * o.resumeSteps} steps; ` +
    `throughput ${o.throughputRounds} rounds of ${o.throughputBudgetMs} ms per side and level. ` +
    `Machine: ${describeMachine(report.machine, report.atEnd)}.`
  );
}

export interface ResultsMarkdownOptions {
  /**
   * Where the raw JSON is, as a link from where this markdown is read (a path relative to the
   * markdown file, or an absolute one on a terminal); no link when null.
   */
  rawFigures?: string | null;
}

/** The results section of docs/benchmarks.md: the verdict per store, every table, the settings, where it came from. */
export function resultsMarkdown(report: BenchReport, options: ResultsMarkdownOptions = {}): string {
  const measured = report.stores.filter(isMeasured);
  const skipped = report.stores.filter((r) => !isMeasured(r));
  if (measured.length === 0) {
    return `${['## Results', '', 'No store was measured, so there is nothing to tabulate:', ...verdictLines(report.stores), '', provenance(report)].join('\n')}\n`;
  }
  const footnotes = [
    ...(measured.some((r) => r.roundTrips.method === 'store-calls')
      ? ['\\* counted as `store.*` calls: the target has no driver counter.']
      : []),
    ...(options.rawFigures
      ? [`Raw figures: [${options.rawFigures}](${encodeURI(options.rawFigures)}).`]
      : []),
  ];
  const lines = [
    '## Results',
    '',
    'In short, on this machine (the pooled headline ratio below; the floor is the cheapest correct append a user would hand-write with the same driver):',
    '',
    ...verdictLines(report.stores),
    '',
    provenance(report),
    'Every time is the median of the per-round figures (a round’s median; its mean for the per-step overhead, the paced and in-loop floor appends and the loop CPU), with the lowest and highest round in brackets; ratios are per round, summarised the same way, except the pooled headline.',
    '',
    '### Per tool step, through run()',
    '',
    `What durability adds to one tool step (call committed, no-op tool, result committed; write #2 overlapping the next model request), with a scripted model of fixed ${report.options.modelLatencyMs} ms latency (never shorter), runs of S = ${report.options.steps} and 2S = ${2 * report.options.steps} tool steps, durable and without a store, interleaved in the same rounds. **Durable overhead / step**: for every tool step the model records the time from the moment its reply was due to the next request (write #1, the tool, and any lateness of a reply the loop was too busy to take; write #2 is started after the request, as run() does, so it shows only if it delays a reply or is still in flight when write #1 must go); per round, the mean over every step but each run's first of the durable runs less the same without a store. A run's first tool step is left out on both sides because its write #1 also stores the user's message and is the session's first append: per-run work, reported in the fixed overhead / run; the pooled ratio with it counted is its own column. **One floor append, paced as a step**: a hand-written loop drives the adapter's floor the same way (same model, write #1 awaited, the next request, then write #2; 3S steps a sample, as many gaps per round as the durable runs give), measured the same way, less the same loop writing nothing. **The headline is pooled**: the mean overhead over all rounds ÷ the mean paced floor append over all rounds, the per-round ratios beside it. **One floor append, made inside the same loop** (context, not the headline): the same floor written where a durable run writes, from run()s of S and 2S steps with no store (the tool awaits write #1, the model starts write #2 after each next request), less the same runs writing nothing; the column after it is, per round, that append less the paced one: what an agent loop's own work around a floor append adds to it on this machine. Target: ${HEADLINE_TARGET.what}, on the pooled ratio. The same overhead against the floor append timed back-to-back is its own column (a connection kept busy answers faster than one idle for a model call; read both). The cross-checks: the overhead from whole-run wall times (((durable 2S − durable S) − (stateless 2S − stateless S)) ÷ S; the lease, the load, the answer and the release cancel out and make the fixed overhead / run), and write #1 through the store against the floor append, each timed back-to-back.`,
    '',
    ...stepRows(measured),
    '',
    '### History growth',
    '',
    'Sessions pre-filled to each size. append: one message at the head; load: the whole session; resume: `run()` continuing the session (lease, one load, the steps, the answer); loop CPU / step: the main-thread CPU of each resumed run between its first and last model request less the model’s own (it includes the driver’s in-process work); per round, (mean of the 2S-step runs − mean of the S-step runs) ÷ S, so the window’s ends cancel; the load’s garbage is collected before the count starts and every sample starts on a collected heap; bytes / step: stored message JSON per step plus the session record.',
    '',
    ...historyRows(measured),
    '',
    '### Throughput (tool steps/s)',
    '',
    'Whole sessions on N concurrent workers through `run()` (no model latency), and the floor driven the same way (per step: the call, then the result, as two floor appends), alternating in each round.',
    '',
    ...throughputRows(report, measured),
    '',
    '### Settings',
    '',
    ...measured.flatMap(settingsLines),
    ...skipped.map((r) => `- **${r.store}**: ${r.status} — ${r.reason}`),
    ...(footnotes.length > 0 ? ['', footnotes.join(' ')] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/** One store's block for its package README. */
export function storeMarkdown(report: BenchReport, store: MeasuredStore): string {
  const lines = [
    `From \`pnpm bench\` (${report.startedAt.slice(0, 10)}; method and every store side by side: docs/benchmarks.md). Times: median of ${report.options.rounds} round medians (lowest–highest round).`,
    '',
    verdictLine(store),
    '',
    ...stepRows([store]),
    '',
    ...historyRows([store]),
    '',
    ...throughputRows(report, [store]),
    '',
    ...settingsLines(store),
    `- Machine: ${describeMachine(report.machine, report.atEnd)}.`,
  ];
  return `${lines.join('\n')}\n`;
}

/** `text` with what lies between `start` and `end` replaced; null when the markers are missing. */
export function replaceBetween(text: string, start: string, end: string, content: string): string | null {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from + start.length);
  if (from < 0 || to < 0) return null;
  return `${text.slice(0, from + start.length)}\n${content}${text.slice(to)}`;
}

export const RESULTS_MARKERS = ['<!-- results:start -->', '<!-- results:end -->'] as const;
export const README_MARKERS = ['<!-- bench:start -->', '<!-- bench:end -->'] as const;
