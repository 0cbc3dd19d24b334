import { fileURLToPath } from 'node:url';
import { launchD1 } from '@agentstore/servers';
import type { BenchReport } from '../test/worker/bench.ts';
import { bundleWorker } from '../test/worker/bundle.ts';

/**
 * Times appends INSIDE workerd (the test worker's /bench route), where a D1 call costs what it
 * costs a deployed Worker's local simulation, not miniflare's Node proxy (~2 ms per call).
 * Usage: pnpm run bench [-- rounds n k bytes]
 */
const [rounds = '15', n = '200', k = '3', bytes = '300'] = process.argv
  .slice(2)
  .filter((arg) => arg !== '--');
const bundle = await bundleWorker(fileURLToPath(new URL('../test/worker/entry.ts', import.meta.url)));
const server = await launchD1({ script: bundle.code });
try {
  // One warm-up round so workerd's JIT and SQLite's page cache are not what the first round measures.
  await server.info.miniflare.dispatchFetch('http://worker/bench?rounds=1&n=50&prefix=warmup_');
  const response = await server.info.miniflare.dispatchFetch(
    `http://worker/bench?rounds=${rounds}&n=${n}&k=${k}&bytes=${bytes}&prefix=bench_`,
  );
  const report = (await response.json()) as BenchReport & { error?: string };
  if (report.error) throw new Error(report.error);
  const us = (v: number) => `${Math.round(v)} µs`;
  console.log(
    `${report.rounds} rounds × ${report.appendsPerRound} appends of ${report.messagesPerAppend} × ${report.messageBytes}-byte messages, inside workerd`,
  );
  console.log(`no-op round trip (SELECT 1)   p50 of round means: ${us(report.medianNoopUs)}`);
  console.log(`floor (hand-written batch)    p50 of round means: ${us(report.medianFloorUs)}`);
  console.log(`d1Store.append                p50 of round means: ${us(report.medianStoreUs)}`);
  console.log(
    `ratio store / floor: ${report.ratio.toFixed(2)} (median of per-round ratios ${report.pairedRatio.toFixed(2)})`,
  );
  console.log(JSON.stringify(report));
} finally {
  await server.stop();
}
