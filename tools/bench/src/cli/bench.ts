#!/usr/bin/env node
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { renderChart } from '../chart.ts';
import { BENCH_USAGE, type BenchCommand, BenchUsageError, parseBenchArgs } from '../options.ts';
import { createProgress } from '../progress.ts';
import { isMeasured } from '../report.ts';
import { runBench } from '../run-bench.ts';
import { formatTable } from '../table.ts';

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

  process.stdout.write(formatTable(report));
  if (command.json) console.log(`JSON: ${write(command.json, `${JSON.stringify(report, null, 2)}\n`)}`);
  if (command.chart) console.log(`Chart: ${write(command.chart, renderChart(report))}`);
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
