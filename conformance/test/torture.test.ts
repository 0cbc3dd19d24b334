import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BackendName } from '../src/backends/index.ts';
import { runTorture, type TortureOptions, type TortureReport } from '../src/torture/index.ts';

// Real worker processes, real SIGKILLs, real servers: a few trials per store with a fixed seed.
// The long runs behind docs/reliability.md use the same code through `pnpm torture`.
const SEED = 20_261_122;
const repoRoot = join(import.meta.dirname, '..', '..');

async function torture(store: BackendName, options: Partial<TortureOptions>): Promise<TortureReport> {
  const report = await runTorture({
    stores: [store],
    trials: 3,
    seed: SEED,
    fenceTrials: 0,
    cwd: repoRoot,
    ...options,
  });
  // The violations first: they name the trial, the seed and what broke.
  expect(report.violations).toEqual([]);
  const [result] = report.stores;
  expect(result!.crash.trials).toBe(options.trials ?? 3);
  expect(result!.crash.completed).toBe(result!.crash.trials);
  expect(result!.crash.kills).toBeGreaterThan(0);
  expect(report.totals).toMatchObject({ duplicates: 0, lost: 0, violations: 0 });
  return report;
}

describe('crash torture across processes', () => {
  it('sqlite: SIGKILLed runs resume exactly once; two racers queue; a stopped worker is fenced; a partitioned holder stops', async () => {
    const report = await torture('sqlite', { trials: 8, racers: [2], fenceTrials: 1, partitionTrials: 1 });
    const [sqlite] = report.stores;
    expect(sqlite!.race[0]).toMatchObject({ racers: 2, trials: 1, racersCompleted: 2, violations: 0 });
    expect(sqlite!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1, violations: 0 });
    expect(sqlite!.partition).toMatchObject({
      trials: 1,
      completed: 1,
      leaseLostRuns: 1,
      effectsFromPartitioned: 0,
      violations: 0,
    });
  }, 150_000);

  it('postgres: crashes, two racers, fencing, and a crash-restart of the server mid-run', async () => {
    const report = await torture('postgres', {
      trials: 4,
      racers: [2],
      fenceTrials: 1,
      faults: true,
      faultTrials: 1,
    });
    const [postgres] = report.stores;
    expect(postgres!.race[0]).toMatchObject({ racers: 2, racersCompleted: 2 });
    expect(postgres!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1 });
    expect(postgres!.fault).toMatchObject({ trials: 1, restarts: 1, completed: 1 });
  }, 150_000);

  it('redis: crashes, a partitioned lease holder, and a SIGKILL-restart of the server on its AOF mid-run', async () => {
    const report = await torture('redis', { trials: 4, faults: true, faultTrials: 1, partitionTrials: 1 });
    expect(report.stores[0]!.fault).toMatchObject({ trials: 1, restarts: 1, completed: 1 });
    expect(report.stores[0]!.partition).toMatchObject({
      trials: 1,
      leaseLostRuns: 1,
      effectsFromPartitioned: 0,
    });
  }, 150_000);

  it('dynamodb (DynamoDB Local, file-backed): crashes resume exactly once', async () => {
    await torture('dynamodb', { trials: 3 });
  }, 150_000);

  it('d1 (miniflare, persisted; each worker runs its own): crashes resume exactly once', async () => {
    await torture('d1', { trials: 2 });
  }, 150_000);
});
