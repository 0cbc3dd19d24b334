import { fileURLToPath } from 'node:url';
import { type D1LaunchInfo, type LaunchedServer, launchD1 } from '@agentstore/servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from './worker/bundle.ts';
import type { RunScenarioReport } from './worker/run-scenario.ts';

/**
 * The store used from worker code: the test worker (store + core bundled into one ES module,
 * no nodejs_compat) runs inside workerd beside its D1 binding; this file only drives it.
 */
let server: LaunchedServer<D1LaunchInfo>;

beforeAll(async () => {
  const bundle = await bundleWorker(fileURLToPath(new URL('./worker/entry.ts', import.meta.url)));
  expect(bundle.imports).toEqual([]);
  server = await launchD1({ script: bundle.code });
});
afterAll(() => server?.stop());

const call = async <T>(path: string): Promise<T> => {
  const response = await server.info.miniflare.dispatchFetch(`http://worker${path}`);
  const body = (await response.json()) as T & { error?: string; stack?: string };
  if (response.status !== 200) throw new Error(`worker ${path}: ${body.error}\n${body.stack}`);
  return body;
};

describe('d1Store inside a Worker', () => {
  it('the store and core bundle into one module that imports nothing from Node', async () => {
    const store = await bundleWorker(fileURLToPath(new URL('../src/index.ts', import.meta.url)));
    expect(store.imports).toEqual([]);
    expect(store.code).not.toMatch(/\bfrom\s+['"]node:|require\(/);
  });

  it('a durable run() crashes after a side effect, resumes by reconciling, and replays from the store', async () => {
    const report = await call<RunScenarioReport>('/run?session=worker-run-1');
    // The crash hit the tool-result append; the ledger's re-read died with the process too.
    expect(report.crashedWith).toContain('SimulatedCrashError');
    expect(report.resumed).toEqual({ status: 'complete', response: 'Emailed Ada.', headSeq: 6 });
    expect(report.replayed).toEqual({ status: 'complete', response: 'Emailed Ada.', modelCalls: 0 });
    // The email went out once; the resumed run asked the outside world instead of sending again.
    expect(report.sideEffects).toEqual({ sendEmail: 1, lookup: 1, reconcile: 1 });
    expect(report.seqs).toEqual([1, 2, 3, 4, 5, 6]);
    expect(report.toolCalls).toBe(2);
    expect(report.resultsPerCall).toEqual([1, 1]);
    expect(report.concurrentRuns).toEqual({ fulfilled: 1, busy: 1, other: [] });
  });

  it('the in-worker bench runs both appends on the same database (timing is for the README, not asserted)', async () => {
    const report = await call<{ storeRoundsUs: number[]; floorRoundsUs: number[]; ratio: number }>(
      '/bench?rounds=2&n=5&prefix=benchtest_',
    );
    expect(report.storeRoundsUs).toHaveLength(2);
    expect(report.floorRoundsUs).toHaveLength(2);
    const rows = await server.info.db
      .prepare('SELECT count(*) AS n FROM benchtest_messages')
      .first<{ n: number }>();
    // 2 rounds × (5 store appends + 5 floor appends) × 3 messages, plus one seed message per floor session.
    expect(rows?.n).toBe(2 * (5 + 5) * 3 + 2);
  });
});
