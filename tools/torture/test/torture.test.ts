import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCleanTorture, runTorture } from '../src/index.ts';

// Real worker processes, real SIGKILLs, a real database file: the custom node:sqlite store of
// docs/custom-store.md, opened in every worker from its target module. Each adapter tortures its
// own target in its package (packages/*/test/torture.test.ts); the long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const SEED = 20_261_122;
const customTarget = join(import.meta.dirname, '../../../docs/examples/custom-store/conformance-target.ts');

describe('crash torture of any target module', () => {
  it('a custom store: SIGKILLed runs resume exactly once; two racers queue; a stopped worker is fenced; a partitioned holder stops', async () => {
    const report = await runCleanTorture({
      targets: [customTarget],
      trials: 6,
      seed: SEED,
      racers: [2],
      fenceTrials: 1,
      partitionTrials: 1,
    });
    const [custom] = report.stores;
    expect(custom!.store).toBe('node:sqlite custom store');
    expect(custom!.race[0]).toMatchObject({ racers: 2, trials: 1, racersCompleted: 2, violations: 0 });
    expect(custom!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1, violations: 0 });
    expect(custom!.partition).toMatchObject({
      trials: 1,
      completed: 1,
      leaseLostRuns: 1,
      effectsFromPartitioned: 0,
      violations: 0,
    });
    expect(report.totals).toMatchObject({ duplicates: 0, lost: 0, violations: 0 });
  }, 150_000);

  it('refuses a target that cannot be reopened by another process', async () => {
    await expect(
      runTorture({
        targets: [join(import.meta.dirname, 'fixtures/in-process-target.ts')],
        trials: 1,
        seed: 1,
      }),
    ).rejects.toThrow(/declares no `reopen` options, so worker processes cannot open the same data/);
  });
});
