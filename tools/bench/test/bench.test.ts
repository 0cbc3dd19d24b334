import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type BenchReport,
  createProgress,
  formatMicros,
  formatTable,
  isMeasured,
  type MeasuredStore,
  marginalCosts,
  parseBenchArgs,
  type RatioSpread,
  README_MARKERS,
  RESULTS_MARKERS,
  renderChart,
  replaceBetween,
  runBench,
  type Spread,
  storeMarkdown,
} from '../src/index.ts';

const repoRoot = join(import.meta.dirname, '../../..');
// Targets are modules, as a user passes them: the kit's own memory baseline and the custom
// node:sqlite store of docs/custom-store.md (adapters bench their own targets in their packages).
const memoryTarget = join(import.meta.dirname, '../src/memory-target.ts');
const customTarget = join(repoRoot, 'docs/examples/custom-store/conformance-target.ts');
const unopenable = join(import.meta.dirname, 'fixtures/unopenable-target.ts');
const scratch = mkdtempSync(join(tmpdir(), 'agentstore-bench-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A small XML well-formedness check (no parser is installed, none is added): one root element,
 * tags nest and close, attributes are quoted and unique, `&` only starts a known entity.
 * Returns the root's name and the start tags in document order.
 */
function parseXml(text: string): {
  root: string;
  elements: { name: string; attributes: Record<string, string> }[];
} {
  const entity = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;
  const token =
    /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<\/([A-Za-z_][\w:.-]*)\s*>|<([A-Za-z_][\w:.-]*)([^<>]*?)(\/?)>|<|[^<]+/g;
  const attribute = /\s+([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/gy;
  const stack: string[] = [];
  const elements: { name: string; attributes: Record<string, string> }[] = [];
  let root: string | null = null;
  let closedRoot = false;
  let first = true;
  for (const match of text.matchAll(token)) {
    const [whole, closing, opening, rest = '', selfClosing] = match;
    if (whole.startsWith('<?')) {
      if (!(first && whole.startsWith('<?xml')) && root === null && !first)
        throw new Error('misplaced declaration');
    } else if (whole.startsWith('<!--')) {
      // comment
    } else if (closing) {
      if (stack.pop() !== closing) throw new Error(`</${closing}> closes nothing open`);
      if (stack.length === 0) closedRoot = true;
    } else if (opening) {
      if (stack.length === 0 && (root !== null || closedRoot)) throw new Error('more than one root element');
      root ??= opening;
      const attributes: Record<string, string> = {};
      attribute.lastIndex = 0;
      let consumed = 0;
      for (let a = attribute.exec(rest); a; a = attribute.exec(rest)) {
        const value = a[2] ?? a[3] ?? '';
        if (a[1]! in attributes) throw new Error(`duplicate attribute ${a[1]} on <${opening}>`);
        if (entity.test(value)) throw new Error(`bare & in an attribute of <${opening}>`);
        attributes[a[1]!] = value;
        consumed = attribute.lastIndex;
      }
      if (rest.slice(consumed).trim() !== '')
        throw new Error(`malformed attributes on <${opening}>: ${rest}`);
      elements.push({ name: opening, attributes });
      if (!selfClosing) stack.push(opening);
      else if (stack.length === 0) closedRoot = true;
    } else if (whole === '<') {
      throw new Error('a < that starts no tag');
    } else {
      if (stack.length === 0 && whole.trim() !== '') throw new Error('text outside the root element');
      if (entity.test(whole)) throw new Error(`bare & in text: ${whole.slice(0, 40)}`);
    }
    first = false;
  }
  if (stack.length) throw new Error(`unclosed <${stack.at(-1)}>`);
  if (root === null) throw new Error('no root element');
  return { root, elements };
}

const positive = (value: number) => {
  expect(Number.isFinite(value)).toBe(true);
  expect(value).toBeGreaterThan(0);
};

function expectSpread(spread: Spread, rounds: number, samplesPerRound: number) {
  expect(spread.rounds).toBe(rounds);
  expect(spread.samplesPerRound).toBe(samplesPerRound);
  for (const value of [spread.p50Us, spread.minUs, spread.maxUs]) expect(Number.isFinite(value)).toBe(true);
  expect(spread.minUs).toBeLessThanOrEqual(spread.p50Us);
  expect(spread.p50Us).toBeLessThanOrEqual(spread.maxUs);
}

function expectRatio(ratio: RatioSpread) {
  expect(ratio.min).toBeLessThanOrEqual(ratio.median);
  expect(ratio.median).toBeLessThanOrEqual(ratio.max);
}

/** Every figure of a measured store is there, counted as promised, in the promised shape. */
function expectComplete(result: MeasuredStore, report: BenchReport, hasFloor: boolean) {
  const { options } = report;
  expect(result.status).toBe('ok');
  expect(result.name).not.toBe('');
  expect(result.server).not.toBe('');
  const { step } = result;
  expect(step.steps).toBe(options.steps);
  expect(step.modelLatencyMs).toBe(options.modelLatencyMs);
  for (const spread of [
    step.durableRun,
    step.durableLongRun,
    step.statelessRun,
    step.statelessLongRun,
    step.overheadPerStep,
    step.marginalPerStep,
    step.fixedPerRun,
    step.storeAppend,
  ])
    expectSpread(spread, options.rounds, options.samples);
  // The model's latency is in every run: a run of N steps waits N + 1 times for it.
  expect(step.statelessRun.p50Us).toBeGreaterThanOrEqual((options.steps + 1) * options.modelLatencyMs * 1000);
  expect(step.statelessLongRun.p50Us).toBeGreaterThanOrEqual(
    (2 * options.steps + 1) * options.modelLatencyMs * 1000,
  );
  if (hasFloor) {
    const floor = step.floor!;
    for (const spread of [
      floor.inLoopAppend,
      floor.pacedAppend,
      floor.append,
      floor.oneCommit,
      floor.twoCommit,
    ])
      expectSpread(spread, options.rounds, options.samples);
    expectRatio(floor.overheadVsPacedAppend);
    expect(Number.isFinite(floor.overheadAllStepsVsPacedAppendPooled)).toBe(true);
    expectRatio(floor.overheadVsInLoopAppend);
    expect(Number.isFinite(floor.overheadVsInLoopAppendPooled)).toBe(true);
    // A difference of two times (either sign), over the same rounds.
    expect(floor.inLoopContext.rounds).toBe(options.rounds);
    expectRatio(floor.overheadVsAppend);
    expect(Number.isFinite(floor.overheadVsPacedAppendPooled)).toBe(true);
    expectRatio(floor.marginalVsAppend);
    expectRatio(floor.storeAppendVsAppend);
    // A floor's round trips are counted only by a target that counts them.
    if (result.roundTrips.method === 'driver') positive(result.roundTrips.floorPerAppend!);
    else expect(result.roundTrips.floorPerAppend).toBeNull();
  } else {
    expect(step.floor).toBeNull();
  }
  const rt = result.roundTrips;
  positive(rt.perAppend);
  positive(rt.perRun);
  expect(rt.perStep).toBeCloseTo(rt.perRun / options.steps, 2);
  // lease, load, 2 appends per step and the final one.
  expect(rt.storeCallsPerRun).toBe(2 + 2 * options.steps + 1);
  expect(rt.unit).not.toBe('');
  expect(result.history.map((h) => h.messages)).toEqual(options.historySizes);
  for (const h of result.history) {
    for (const spread of [h.append, h.load, h.resume, h.loopCpuPerStep])
      expectSpread(spread, options.rounds, options.historySamples);
    positive(h.sessions);
    // Each tool result carries --payload bytes of data; the session record is rewritten too.
    expect(h.bytesPerStep).toBeGreaterThan(options.payloadBytes);
  }
  // An append writes only its new messages: bytes per step do not grow with the history.
  const bytes = result.history.map((h) => h.bytesPerStep);
  expect(Math.max(...bytes) - Math.min(...bytes)).toBeLessThan(16);
  expect(result.throughput.map((t) => t.concurrency)).toEqual(options.concurrency);
  for (const t of result.throughput) {
    expect(t.sessionsPerRound).toHaveLength(options.throughputRounds);
    for (const sessions of t.sessionsPerRound) {
      expect(sessions).toBeGreaterThanOrEqual(Math.min(t.concurrency, options.sessions));
      expect(sessions).toBeLessThanOrEqual(options.sessions);
    }
    positive(t.store.median);
    if (hasFloor) {
      positive(t.floor!.median);
      expectRatio(t.storeVsFloor!);
    } else expect(t.floor).toBeNull();
  }
  positive(result.durationMs);
}

function expectChart(svg: string, stores: string[], withFloor: string[]) {
  const { root, elements } = parseXml(svg);
  expect(root).toBe('svg');
  expect(elements[0]!.attributes.xmlns).toBe('http://www.w3.org/2000/svg');
  const bars = (series: string) =>
    elements
      .filter((e) => e.name === 'rect' && e.attributes['data-series'] === series)
      .map((e) => e.attributes['data-store']);
  expect(bars('overhead')).toEqual(withFloor);
  expect(bars('concurrency-1')).toEqual(stores);
  for (const bar of elements.filter((e) => e.attributes['data-series']))
    positive(Number(bar.attributes.width));
}

describe('agentstore-bench, in process (quick mode)', () => {
  let report: BenchReport;

  it('measures the memory baseline and a custom store from their target modules: every figure, the floor, the machine', {
    timeout: 120_000,
  }, async () => {
    report = await runBench({ targets: [memoryTarget, customTarget], quick: true, modelLatencyMs: 1 });
    expect(report.options.quick).toBe(true);
    expect(report.stores.map((s) => [s.store, s.status])).toEqual([
      ['memory (test store)', 'ok'],
      ['node:sqlite custom store', 'ok'],
    ]);
    const [memory, custom] = report.stores.filter(isMeasured);
    expectComplete(memory!, report, false);
    expectComplete(custom!, report, true);
    // Neither target counts round trips: store calls are counted, and said so.
    expect(memory!.roundTrips.method).toBe('store-calls');
    expect(memory!.roundTrips.perAppend).toBe(1);
    expect(memory!.notes.join()).toMatch(/in-process test store/);
    // Neither reports durability settings; the record says so rather than guessing.
    expect(memory!.backend).toEqual({ settings: {}, storage: null });
    expect(custom!.roundTrips.method).toBe('store-calls');
    expect(custom!.server).toBe('node:sqlite custom store');
    expect(report.machine.cpuCount).toBeGreaterThan(0);
    expect(report.machine.cpuModel).not.toBe('');
    positive(report.machine.totalMemoryBytes);
    expect(report.machine.node).toBe(process.version);
    expect(report.atEnd.loadAverage).toHaveLength(3);
  });

  it('prints the tables and the settings, draws the chart, and writes a README block per store', () => {
    const table = formatTable(report);
    expect(table).toContain('### Per tool step, through run()');
    expect(table).toMatch(/^\| memory \(test store\) \| \S+ (µs|ms) \(/m);
    // The pooled headline in bold, the per-round ratios beside it.
    expect(table).toMatch(/^\| node:sqlite custom store \| .*\| \*\*\d+\.\d+×\*\* \(\d+\.\d+× \(/m);
    expect(table).toContain('### History growth');
    expect(table).toContain('### Throughput (tool steps/s)');
    expect(table).toContain('### Settings');
    expect(table).toContain('quick mode (not for publishing)');
    expectChart(
      renderChart(report),
      ['memory (test store)', 'node:sqlite custom store'],
      ['node:sqlite custom store'],
    );
    const custom = report.stores.filter(isMeasured)[1]!;
    const readme = `# x\n\n${README_MARKERS[0]}\nold\n${README_MARKERS[1]}\n\nafter\n`;
    const updated = replaceBetween(
      readme,
      README_MARKERS[0],
      README_MARKERS[1],
      storeMarkdown(report, custom),
    );
    expect(updated).not.toContain('old');
    expect(updated).toContain('| node:sqlite custom store |');
    expect(updated!.endsWith(`${README_MARKERS[1]}\n\nafter\n`)).toBe(true);
    expect(replaceBetween('no markers', README_MARKERS[0], README_MARKERS[1], 'x')).toBeNull();
  });
});

/** Runs the CLI from its TypeScript source in a child Node, as a user's shell would run the bin. */
function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@agentstore/source', join(repoRoot, 'tools/bench/src/cli/bench.ts'), ...args],
      { cwd: repoRoot, env },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('agentstore-bench CLI', () => {
  it('measures a custom store, skips a target that cannot open, writes JSON and an SVG chart', {
    timeout: 60_000,
  }, async () => {
    const json = join(scratch, 'out/results.json');
    const chart = join(scratch, 'out/chart.svg');
    const markdown = join(scratch, 'benchmarks.md');
    writeFileSync(
      markdown,
      `# Benchmarks\n\n${RESULTS_MARKERS[0]}\nold results\n${RESULTS_MARKERS[1]}\n\n## Method\n`,
    );
    const { code, stdout, stderr } = await cli([
      '--target',
      `${unopenable},${customTarget}`,
      '--quick',
      '--concurrency',
      '1,4',
      '--history',
      '10',
      '--json',
      json,
      '--chart',
      chart,
      '--markdown',
      markdown,
    ]);
    expect(stderr).toContain('agentstore-bench: node:sqlite custom store (2/2) per tool step');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\| node:sqlite custom store \| \S+ (µs|ms) \(/m);
    expect(stdout).toMatch(/^- \*\*unopenable-target\.ts\*\*: skipped — example-server was not found/m);
    const docs = readFileSync(markdown, 'utf8');
    expect(docs).not.toContain('old results');
    expect(docs).toContain('| node:sqlite custom store |');
    expect(docs).toMatch(/<!-- results:end -->\n\n## Method\n$/);

    const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    expect(report.options.concurrency).toEqual([1, 4]);
    expect(report.options.historySizes).toEqual([10]);
    expect(report.stores.map((s) => s.status)).toEqual(['skipped', 'ok']);
    expectComplete(report.stores[1] as MeasuredStore, report, true);
    for (const key of [
      'cpuModel',
      'cpuCount',
      'totalMemoryBytes',
      'os',
      'arch',
      'node',
      'loadAverage',
    ] as const) {
      expect(report.machine[key]).toBeTruthy();
    }
    expectChart(readFileSync(chart, 'utf8'), ['node:sqlite custom store'], ['node:sqlite custom store']);
  });

  it('exits 2 on a usage error, naming the problem', async () => {
    const none = await cli(['--quick']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--target names no target module');
    expect(none.stderr).toContain('Usage: agentstore-bench');
    expect((await cli(['--payload', '10'])).code).toBe(2);
    expect((await cli(['--concurrency', '1,zero'])).code).toBe(2);
    expect((await cli(['--no-such-flag'])).code).toBe(2);
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--concurrency <list>');
  });
});

describe('the marginal cost of a step', () => {
  it('takes the per-run costs out: only what one more step adds is left, and the rest is the fixed cost', () => {
    // Per round: a run costs fixed + steps × per-step; without a store, fixed' + steps × per-step'.
    const steps = 10;
    const durable = (fixed: number, perStep: number, n: number) => fixed + n * perStep;
    const rounds = [
      { fixed: 3, perStep: 0.5, statelessFixed: 1, statelessPerStep: 2 },
      { fixed: 5, perStep: 0.7, statelessFixed: 2, statelessPerStep: 2.2 },
    ];
    const { marginal, fixed } = marginalCosts(steps, {
      durable: rounds.map((r) => durable(r.fixed + r.statelessFixed, r.perStep + r.statelessPerStep, steps)),
      durableLong: rounds.map((r) =>
        durable(r.fixed + r.statelessFixed, r.perStep + r.statelessPerStep, 2 * steps),
      ),
      stateless: rounds.map((r) => durable(r.statelessFixed, r.statelessPerStep, steps)),
      statelessLong: rounds.map((r) => durable(r.statelessFixed, r.statelessPerStep, 2 * steps)),
    });
    expect(marginal[0]).toBeCloseTo(0.5, 10);
    expect(marginal[1]).toBeCloseTo(0.7, 10);
    expect(fixed[0]).toBeCloseTo(3, 10);
    expect(fixed[1]).toBeCloseTo(5, 10);
  });

  it('prints a difference that came out below zero in the same units as a positive one', () => {
    expect(formatMicros(-47.1)).toBe('−47 µs');
    expect(formatMicros(-15_236.7)).toBe('−15.2 ms');
    expect(formatMicros(2_540)).toBe('2.54 ms');
  });
});

describe('bench options and progress', () => {
  it('quick mode lowers rounds, samples and sizes; explicit values win', () => {
    const quick = parseBenchArgs(['--quick', '--target', 'a.ts,b.ts']).options;
    expect(quick).toMatchObject({
      quick: true,
      rounds: 2,
      samples: 1,
      historySizes: [10, 100],
      steps: 10,
      payloadBytes: 300,
      modelLatencyMs: 2,
    });
    expect(quick.targets).toEqual([join(process.cwd(), 'a.ts'), join(process.cwd(), 'b.ts')]);
    const custom = parseBenchArgs([
      '-t',
      'a.ts',
      '--quick',
      '--rounds',
      '7',
      '--history',
      '1000,10',
      '--concurrency',
      '32,1,8,8',
    ]).options;
    expect(custom.rounds).toBe(7);
    expect(custom.historySizes).toEqual([10, 1000]);
    expect(custom.concurrency).toEqual([1, 8, 32]);
    expect(parseBenchArgs(['-t', 'a.ts']).options).toMatchObject({
      quick: false,
      rounds: 5,
      samples: 12,
      historySizes: [10, 100, 1000, 10000],
      concurrency: [1, 8, 32],
    });
    expect(parseBenchArgs(['-t', 'a.ts', '--readme', '--markdown', 'x.md'])).toMatchObject({
      readme: true,
      markdown: 'x.md',
    });
  });

  it('draws a bar in place on a terminal and writes plain lines elsewhere', () => {
    const progress = { store: 'sqlite', storeIndex: 1, storeCount: 2, phaseIndex: 2, phaseCount: 4 } as const;
    const tty: string[] = [];
    const bar = createProgress({ isTTY: true, columns: 120, write: (text) => tty.push(text) });
    bar.update({ ...progress, phase: 'loop', done: 2, total: 4 });
    bar.finish();
    const clearLine = '\r\x1b[2K';
    expect(tty[0]!.startsWith(clearLine)).toBe(true);
    expect(tty[0]!.slice(clearLine.length)).toMatch(/^\[█+░+\]\s+81%\s+sqlite \(2\/2\): loop 2\/4$/);
    expect(tty.at(-1)).toBe(clearLine);

    const plain: string[] = [];
    const lines = createProgress({ isTTY: false, write: (text) => plain.push(text) });
    lines.update({ ...progress, phase: 'loop', done: 0, total: 4 });
    lines.update({ ...progress, phase: 'loop', done: 3, total: 4 });
    lines.finish();
    expect(plain).toEqual(['agentstore-bench: sqlite (2/2) loop\n']);
  });

  it('keeps the whole line when the terminal reports zero or no columns, and clips to a narrow one', () => {
    const progress = { store: 'sqlite', storeIndex: 1, storeCount: 2, phaseIndex: 2, phaseCount: 4 } as const;
    const drawn = (columns: number | undefined) => {
      const out: string[] = [];
      const bar = createProgress({
        isTTY: true,
        ...(columns === undefined ? {} : { columns }),
        write: (t) => out.push(t),
      });
      bar.update({ ...progress, phase: 'loop', done: 4, total: 4 });
      return out[0]!.slice('\r\x1b[2K'.length);
    };
    expect(drawn(0)).toMatch(/sqlite \(2\/2\): loop 4\/4$/);
    expect(drawn(undefined)).toMatch(/sqlite \(2\/2\): loop 4\/4$/);
    expect(drawn(11)).toHaveLength(10);
  });
});
