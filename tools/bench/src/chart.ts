import { formatCount, formatMicros, formatRatio } from './format.ts';
import { describeMachine } from './machine.ts';
import { type BenchReport, isMeasured, type MeasuredStore } from './report.ts';

const WIDTH = 960;
/** Room for a store's name; its parenthetical (e.g. "(WAL file, synchronous FULL)") goes on a second line. */
const LABEL_WIDTH = 180;
const PLOT_LEFT = 20 + LABEL_WIDTH;
const PLOT_WIDTH = 490;
/** Footer lines are wrapped at this many characters, so none runs off the right edge. */
const FOOTER_CHARS = 150;
/** Where a row's ratio is written, right of the longest possible bar and its caption. */
const ASIDE_X = PLOT_LEFT + PLOT_WIDTH + 90;
const COLORS = { store: '#2563eb', floor: '#9ca3af' };
const LEVEL_COLORS = ['#0f766e', '#14b8a6', '#5eead4', '#a16207', '#eab308', '#fde047'];

/** Read by screen readers and shown as a tooltip. */
const CHART_TITLE =
  'agentstore benchmark: durable overhead per tool step against one floor append paced as a step, and steps per second by concurrency for the store and its floor';

export const escapeXml = (text: string): string =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');

const text = (x: number, y: number, content: string, attributes = ''): string =>
  `<text x="${x}" y="${y}"${attributes ? ` ${attributes}` : ''}>${escapeXml(content)}</text>`;

/** A log10 axis over whole decades covering every value (times and rates span decades across stores). */
function logScale(values: number[]) {
  const positive = values.filter((v) => v > 0);
  const low = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  let high = 10 ** Math.ceil(Math.log10(Math.max(...positive)));
  if (high <= low) high = low * 10;
  const span = Math.log10(high) - Math.log10(low);
  const ticks: number[] = [];
  for (let tick = low; tick <= high * 1.0001; tick *= 10) ticks.push(tick);
  return {
    ticks,
    /** Bar length in px for a value. */
    length: (value: number) =>
      Math.max(1, ((Math.log10(Math.max(value, low)) - Math.log10(low)) / span) * PLOT_WIDTH),
  };
}

/** `line` broken at spaces into lines of at most `width` characters (a longer word stays whole). */
function wrap(line: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of line.split(' ')) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines;
}

interface Bar {
  series: string;
  label: string;
  value: number;
  color: string;
  caption: string;
}

interface Row {
  store: string;
  bars: Bar[];
  /** Written after the longest bar. */
  aside?: string;
}

/** One panel: a title, a legend, decade gridlines and one group of horizontal bars per store. */
function panel(
  top: number,
  title: string,
  legend: { label: string; color: string }[],
  asideTitle: string | null,
  rows: Row[],
  tickLabel: (value: number) => string,
  barHeight: number,
): { svg: string[]; height: number } {
  const scale = logScale(rows.flatMap((row) => row.bars.map((bar) => bar.value)));
  const out: string[] = [text(20, top + 18, title, 'class="panel-title"')];
  let legendX = PLOT_LEFT;
  for (const item of legend) {
    out.push(
      `<rect x="${legendX}" y="${top + 30}" width="12" height="12" fill="${item.color}"/>`,
      text(legendX + 18, top + 40, item.label, 'class="legend"'),
    );
    legendX += 30 + item.label.length * 7;
  }
  if (asideTitle) out.push(text(ASIDE_X, top + 40, asideTitle, 'class="legend"'));
  const plotTop = top + 56;
  const groupHeight = (barHeight + 3) * Math.max(...rows.map((row) => row.bars.length)) + 14;
  const plotHeight = rows.length * groupHeight;
  for (const tick of scale.ticks) {
    const x = PLOT_LEFT + (tick === scale.ticks[0] ? 0 : scale.length(tick));
    out.push(
      `<line x1="${x.toFixed(1)}" y1="${plotTop - 4}" x2="${x.toFixed(1)}" y2="${plotTop + plotHeight}" class="grid"/>`,
      text(x, plotTop + plotHeight + 16, tickLabel(tick), 'class="tick" text-anchor="middle"'),
    );
  }
  rows.forEach((row, index) => {
    const y = plotTop + index * groupHeight;
    const middle = y + (row.bars.length * (barHeight + 3)) / 2 + 4;
    // "sqlite (WAL file, synchronous FULL)": the name, then the parenthetical smaller below it.
    const open = row.store.indexOf(' (');
    if (open > 0) {
      out.push(
        text(20, middle - 6, row.store.slice(0, open), 'class="store"'),
        text(20, middle + 8, row.store.slice(open + 1), 'class="store-detail"'),
      );
    } else {
      out.push(text(20, middle, row.store, 'class="store"'));
    }
    row.bars.forEach((bar, b) => {
      const barY = y + b * (barHeight + 3);
      const width = scale.length(bar.value);
      out.push(
        `<rect x="${PLOT_LEFT}" y="${barY}" width="${width.toFixed(1)}" height="${barHeight}" fill="${bar.color}" ` +
          `data-store="${escapeXml(row.store)}" data-series="${escapeXml(bar.series)}" data-value="${bar.value}">` +
          `<title>${escapeXml(`${row.store} ${bar.label}: ${bar.caption}`)}</title></rect>`,
        text(PLOT_LEFT + width + 4, barY + barHeight - 2, bar.caption, 'class="value"'),
      );
    });
    if (row.aside) out.push(text(ASIDE_X, middle, row.aside, 'class="ratio"'));
  });
  return { svg: out, height: plotTop + plotHeight + 28 - top };
}

/**
 * The report as a standalone SVG (no dependency): append p50 against the raw floor per store,
 * and steps/s at each concurrency level, both on log scales, with the machine they came from.
 */
export function renderChart(report: BenchReport): string {
  const measured: MeasuredStore[] = report.stores.filter(isMeasured);
  const { options } = report;
  const body: string[] = [];
  let y = 70;
  if (measured.length) {
    const withStep = measured.filter((r) => r.step.floor !== null);
    if (withStep.length) {
      const latency = panel(
        y,
        `Per tool step through run() (model ${options.modelLatencyMs} ms), median of ${options.rounds} rounds (log scale)`,
        [
          { label: 'durable overhead / step', color: COLORS.store },
          { label: 'one floor append, paced as a step', color: COLORS.floor },
          { label: 'two-commit floor / step', color: '#d1d5db' },
        ],
        'overhead ÷ floor append',
        withStep.map((r) => {
          const step = r.step;
          const floor = step.floor!;
          const bar = (series: string, label: string, us: number, color: string) => ({
            series,
            label,
            value: Math.max(us, 0.1),
            color,
            caption: formatMicros(us),
          });
          return {
            store: r.store,
            bars: [
              bar('overhead', 'durable overhead per step', step.overheadPerStep.p50Us, COLORS.store),
              bar('floor', 'one floor append, paced as a step', floor.pacedAppend.p50Us, COLORS.floor),
              bar('two-commit', 'two-commit floor per step', floor.twoCommit.p50Us, '#d1d5db'),
            ],
            aside: formatRatio(floor.overheadVsPacedAppendPooled),
          };
        }),
        formatMicros,
        12,
      );
      body.push(...latency.svg);
      y += latency.height + 20;
    }
    const throughput = panel(
      y,
      `Steps/s by concurrent sessions, store (solid) and floor (light), ${options.steps}-step sessions (log scale)`,
      options.concurrency.map((level, i) => ({
        label: `${level} concurrent`,
        color: LEVEL_COLORS[i % LEVEL_COLORS.length]!,
      })),
      null,
      measured.map((r) => ({
        store: r.store,
        bars: r.throughput.flatMap((c, i) => [
          {
            series: `concurrency-${c.concurrency}`,
            label: `${c.concurrency} concurrent`,
            value: c.store.median,
            color: LEVEL_COLORS[i % LEVEL_COLORS.length]!,
            caption: `${formatCount(c.store.median)} steps/s`,
          },
          ...(c.floor
            ? [
                {
                  series: `floor-concurrency-${c.concurrency}`,
                  label: `floor ${c.concurrency} concurrent`,
                  value: c.floor.median,
                  color: '#e5e7eb',
                  caption: `floor ${formatCount(c.floor.median)}`,
                },
              ]
            : []),
        ]),
      })),
      formatCount,
      8,
    );
    body.push(...throughput.svg);
    y += throughput.height + 10;
  } else {
    body.push(text(20, y + 20, 'No store was measured.', 'class="store"'));
    y += 40;
  }
  const skipped = report.stores.filter((r) => !isMeasured(r)).map((r) => `${r.store} ${r.status}`);
  const footer = [
    `Machine: ${describeMachine(report.machine, report.atEnd)}. ${report.startedAt.slice(0, 10)}.`,
    report.note,
    ...(skipped.length ? [`Not measured: ${skipped.join(', ')}.`] : []),
    // What a target says must stand beside its numbers (e.g. D1 timed through miniflare's proxy).
    ...new Set(measured.flatMap((r) => r.notes.map((note) => `${r.store}: ${note}`))),
  ];
  const footerLines = footer.flatMap((line) => wrap(line, FOOTER_CHARS));
  footerLines.forEach((line, i) => {
    body.push(text(20, y + i * 16, line, 'class="footer"'));
  });
  const height = y + footerLines.length * 16 + 10;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" role="img">`,
    `<title>${CHART_TITLE}</title>`,
    '<style>',
    '.title{font-size:18px;font-weight:600;fill:#111827}',
    '.subtitle,.footer{font-size:11px;fill:#4b5563}',
    '.panel-title{font-size:13px;font-weight:600;fill:#111827}',
    '.legend,.tick,.value{font-size:11px;fill:#374151}',
    '.store{font-size:12px;font-weight:600;fill:#111827}',
    '.store-detail{font-size:10px;fill:#4b5563}',
    '.ratio{font-size:12px;font-weight:600;fill:#1d4ed8}',
    '.grid{stroke:#e5e7eb;stroke-width:1}',
    '</style>',
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(20, 30, 'agentstore-bench: what durability costs per store', 'class="title"'),
    text(
      20,
      50,
      `agentstore ${report.version}${options.quick ? ', quick mode' : ''}. Ratios are the headline; times are this machine’s.`,
      'class="subtitle"',
    ),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
