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

describe('agentstore-torture on @agentstore/d1/testing', () => {
  it('crashes resume exactly once (miniflare, persisted; each worker runs its own engine)', async () => {
    const report = await torture({ trials: 2, racers: [2] });
    // miniflare's engines cannot share one file at once: the target says so, and racing is skipped.
    expect(report.stores[0]!.skipped.join()).toMatch(/multiProcess: false/);
  }, 150_000);
});
