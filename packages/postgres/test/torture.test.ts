import { join } from 'node:path';
import { runTorture, type TortureOptions, type TortureReport } from '@agentstore/conformance/torture';
import { describe, expect, it } from 'vitest';

// agentstore-torture on this package's published target module: real worker processes, real
// SIGKILLs, a real server, a few trials with a fixed seed. The long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const target = join(import.meta.dirname, '../src/testing/index.ts');

async function torture(options: Partial<TortureOptions>): Promise<TortureReport> {
  const report = await runTorture({
    targets: [target],
    trials: 3,
    seed: 20_261_122,
    fenceTrials: 0,
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

describe('agentstore-torture on @agentstore/postgres/testing', () => {
  it('crashes, two racers, fencing, and a crash-restart of the server mid-run', async () => {
    const report = await torture({ trials: 4, racers: [2], fenceTrials: 1, faults: true, faultTrials: 1 });
    const [postgres] = report.stores;
    expect(postgres!.race[0]).toMatchObject({ racers: 2, racersCompleted: 2 });
    expect(postgres!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1 });
    expect(postgres!.fault).toMatchObject({ trials: 1, restarts: 1, completed: 1 });
  }, 150_000);
});
