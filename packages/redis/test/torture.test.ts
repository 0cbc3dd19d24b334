import { join } from 'node:path';
import { runCleanTorture, type TortureOptions } from '@agentstore/torture';
import { describe, expect, it } from 'vitest';

// agentstore-torture on this package's published target module: real worker processes, real
// SIGKILLs, a real server, a few trials with a fixed seed. The long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const target = join(import.meta.dirname, '../src/testing/index.ts');

const torture = (options: Partial<TortureOptions>) =>
  runCleanTorture({ targets: [target], trials: 3, seed: 20_261_122, fenceTrials: 0, ...options });

describe('agentstore-torture on @agentstore/redis/testing', () => {
  it('crashes and a SIGKILL-restart of the server on its AOF mid-run', async () => {
    const report = await torture({ trials: 4, faults: true, faultTrials: 1 });
    expect(report.stores[0]!.fault).toMatchObject({ trials: 1, restarts: 1, completed: 1 });
  }, 150_000);
});
