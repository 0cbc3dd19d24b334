import { join } from 'node:path';
import { runCleanTorture, type TortureOptions } from '@agentstore/torture';
import { describe, expect, it } from 'vitest';

// agentstore-torture on this package's published target module: real worker processes, real
// SIGKILLs, a real server, a few trials with a fixed seed. The long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const target = join(import.meta.dirname, '../src/testing/index.ts');

const torture = (options: Partial<TortureOptions>) =>
  runCleanTorture({ targets: [target], trials: 3, seed: 20_261_122, fenceTrials: 0, ...options });

describe('agentstore-torture on @agentstore/d1/testing', () => {
  it('crashes resume exactly once (miniflare, persisted; each worker runs its own engine)', async () => {
    const report = await torture({ trials: 2, racers: [2] });
    // miniflare's engines cannot share one file at once: the target says so, and racing is skipped.
    expect(report.stores[0]!.skipped.join()).toMatch(/multiProcess: false/);
  }, 150_000);
});
