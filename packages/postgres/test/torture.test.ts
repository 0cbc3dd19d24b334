import { join } from 'node:path';
import { runCleanTorture, type TortureOptions } from '@agentstore/torture';
import { describe, expect, it } from 'vitest';

// agentstore-torture on this package's published target module: real worker processes, real
// SIGKILLs, a real server, a few trials with a fixed seed. The long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const target = join(import.meta.dirname, '../src/testing/index.ts');

const torture = (options: Partial<TortureOptions>) =>
  runCleanTorture({ targets: [target], trials: 3, seed: 20_261_122, fenceTrials: 0, ...options });

describe('agentstore-torture on @agentstore/postgres/testing', () => {
  it('crashes, two racers, fencing, and a crash-restart of the server mid-run', async () => {
    const report = await torture({ trials: 4, racers: [2], fenceTrials: 1, faults: true, faultTrials: 1 });
    const [postgres] = report.stores;
    expect(postgres!.race[0]).toMatchObject({ racers: 2, racersCompleted: 2 });
    expect(postgres!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1 });
    expect(postgres!.fault).toMatchObject({ trials: 1, restarts: 1, completed: 1 });
  }, 150_000);
});
