#!/usr/bin/env node
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { renderChart } from '../chart.ts';
import {
  README_MARKERS,
  RESULTS_MARKERS,
  replaceBetween,
  resultsMarkdown,
  storeMarkdown,
} from '../markdown.ts';
import { BENCH_USAGE, type BenchCommand, BenchUsageError, parseBenchArgs } from '../options.ts';
import { createProgress } from '../progress.ts';
import { type BenchReport, isMeasured } from '../report.ts';
import { runBench } from '../run-bench.ts';
import { formatTable } from '../table.ts';

/** Rewrites what lies between `markers` in `path`; false when the file or its markers are missing. */
function rewriteBetween(path: string, markers: readonly [string, string], content: string): boolean {
  if (!existsSync(path)) return false;
  const updated = replaceBetween(readFileSync(path, 'utf8'), markers[0], markers[1], content);
  if (updated === null) return false;
  writeFileSync(path, updated);
  return true;
}

/** Each measured store's block in the README of the package holding its target module, where marked. */
function writeReadmes(report: BenchReport): string[] {
  const written: string[] = [];
  for (const store of report.stores.filter(isMeasured)) {
    if (!store.packageDir) continue;
    const readme = resolve(process.cwd(), join(store.packageDir, 'README.md'));
    if (rewriteBetween(readme, README_MARKERS, storeMarkdown(report, store))) written.push(readme);
  }
  return written;
}

function write(path: string, content: string): string {
  const absolute = resolve(process.cwd(), path);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, content);
  return absolute;
}

async function main(argv: string[]): Promise<number> {
  let command: BenchCommand;
  try {
    command = parseBenchArgs(argv);
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    console.error(`agentstore-bench: ${error.message}\n\n${BENCH_USAGE}`);
    return 2;
  }
  if (command.help) {
    console.log(BENCH_USAGE);
    return 0;
  }

  // Ctrl-C still stops the servers the bench started (a daemonised redis-server would outlive us).
  const abort = new AbortController();
  const interrupt = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const progress = createProgress(process.stderr);
  let report: Awaited<ReturnType<typeof runBench>>;
  try {
    report = await runBench(command.options, { onProgress: progress.update, signal: abort.signal });
  } catch (error) {
    progress.finish();
    if (abort.signal.aborted) {
      console.error('agentstore-bench: interrupted; servers stopped');
      return 130;
    }
    throw error;
  }
  progress.finish();

  const json = command.json ? resolve(process.cwd(), command.json) : null;
  // On the terminal the JSON's own path; in a markdown file, a link relative to that file.
  process.stdout.write(formatTable(report, { rawFigures: json }));
  if (command.json) console.log(`JSON: ${write(command.json, `${JSON.stringify(report, null, 2)}\n`)}`);
  if (command.chart) console.log(`Chart: ${write(command.chart, renderChart(report))}`);
  if (command.markdown) {
    const path = resolve(process.cwd(), command.markdown);
    const rawFigures = json === null ? null : relative(dirname(path), json);
    if (!rewriteBetween(path, RESULTS_MARKERS, resultsMarkdown(report, { rawFigures }))) {
      console.error(`agentstore-bench: ${path} has no ${RESULTS_MARKERS.join(' … ')} markers; not written`);
      return 1;
    }
    console.log(`Markdown: ${path}`);
  }
  if (command.readme) for (const readme of writeReadmes(report)) console.log(`README: ${readme}`);
  const failed = report.stores.some((store) => store.status === 'failed');
  return failed || !report.stores.some(isMeasured) ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
