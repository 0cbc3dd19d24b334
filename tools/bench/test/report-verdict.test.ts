import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type BenchReport,
  formatTable,
  LOW_THROUGHPUT_RATIO,
  type MeasuredStore,
  resultsMarkdown,
  storeMarkdown,
  verdictLine,
} from '../src/index.ts';

const repoRoot = join(import.meta.dirname, '../../..');
// A real report (the published one) as the shape to render; the figures below are set by hand.
const published = JSON.parse(
  readFileSync(join(repoRoot, 'docs/benchmarks/results.json'), 'utf8'),
) as BenchReport;

/** The published Postgres result with a headline ratio and a store ÷ floor throughput we choose. */
function postgresWith(ratio: number, throughputRatios: number[]): MeasuredStore {
  const base = structuredClone(published.stores.find((s) => s.store === 'postgres')) as MeasuredStore;
  base.step.floor!.overheadVsPacedAppendPooled = ratio;
  base.step.overheadPerStep.p50Us = 1_100;
  base.step.floor!.pacedAppend.p50Us = 1_000;
  base.throughput = throughputRatios.map((median, i) => ({
    ...base.throughput[0]!,
    concurrency: [1, 8, 32][i]!,
    storeVsFloor: { median, min: median, max: median },
  }));
  return base;
}

describe('the report says what it found in plain words before the tables', () => {
  it('gives each store its overhead over the floor as a percentage, before any table', () => {
    const store = postgresWith(1.1, [0.95, 0.8, 0.7]);
    expect(verdictLine(store)).toBe(
      "- **postgres**: durability adds 10% per tool step over the floor on this machine: 1.10 ms per step against 1.00 ms for one hand-written floor append (1.10×); throughput at least 0.70× the floor's (worst at 32 concurrent sessions).",
    );
    const faster = postgresWith(0.93, [1, 1, 1]);
    expect(verdictLine(faster)).toMatch(/durability costs 7% less per tool step than the floor/);
    const markdown = resultsMarkdown({ ...published, stores: [store] });
    expect(markdown.indexOf('- **postgres**: durability adds 10%')).toBeGreaterThan(0);
    expect(markdown.indexOf('- **postgres**: durability adds 10%')).toBeLessThan(
      markdown.indexOf('| store |'),
    );
    expect(storeMarkdown(published, store)).toContain('durability adds 10% per tool step');
  });

  it('flags a store whose throughput is far below its floor, naming the ratio and the concurrency', () => {
    const slow = postgresWith(1.05, [0.9, 0.23, 0.4]);
    const line = verdictLine(slow);
    expect(line).toContain('**Warning: throughput is far below the floor**: 0.23× of the floor');
    expect(line).toContain('at 8 concurrent sessions');
    expect(0.23).toBeLessThan(LOW_THROUGHPUT_RATIO);
    expect(verdictLine(postgresWith(1.05, [0.9, 0.8, 0.6]))).not.toContain('Warning');
  });

  it('names no internal issue, and links the raw figures only where told, as a working path', () => {
    const markdown = resultsMarkdown(published);
    expect(markdown).not.toMatch(/issue\s*#?\d+/i);
    expect(markdown).not.toMatch(/\]\(/);
    const linked = resultsMarkdown(published, { rawFigures: 'benchmarks/results.json' });
    const links = [...linked.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toEqual(['benchmarks/results.json']);
    // docs/benchmarks.md is where that relative link is read.
    expect(() => readFileSync(join(repoRoot, 'docs', links[0]!))).not.toThrow();
  });

  it('prints no empty tables when no store could be measured, and says why for each', () => {
    const text = formatTable({
      ...published,
      stores: [
        { store: '@agentstore/postgres (dist/testing/index.js)', status: 'skipped', reason: 'no server' },
      ],
    });
    expect(text).toContain('No store was measured');
    expect(text).toContain(
      '- **@agentstore/postgres (dist/testing/index.js)**: not measured (skipped): no server',
    );
    expect(text).not.toContain('| store |');
  });

  it('the CLI exits 1 without tables when its only target cannot open', () => {
    const result = spawnSync(
      process.execPath,
      [
        '--conditions=@agentstore/source',
        join(repoRoot, 'tools/bench/src/cli/bench.ts'),
        '--quick',
        '--target',
        join(import.meta.dirname, 'fixtures/unopenable-target.ts'),
      ],
      { cwd: repoRoot, encoding: 'utf8' },
    );
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('No store was measured');
    expect(result.stdout).toMatch(
      /^- \*\*unopenable-target\.ts\*\*: not measured \(skipped\): example-server was not found/m,
    );
    expect(result.stdout).not.toContain('|---');
  });
});
