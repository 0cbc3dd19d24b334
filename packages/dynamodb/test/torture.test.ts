import { join } from 'node:path';
import { runCleanTorture, type TortureOptions } from '@agentstore/torture';
import { describe, it } from 'vitest';

// agentstore-torture on this package's published target module: real worker processes, real
// SIGKILLs, a real server, a few trials with a fixed seed. The long runs behind
// docs/reliability.md use the same code through `pnpm torture`.
const target = join(import.meta.dirname, '../src/testing/index.ts');

const torture = (options: Partial<TortureOptions>) =>
  runCleanTorture({ targets: [target], trials: 3, seed: 20_261_122, fenceTrials: 0, ...options });

describe('agentstore-torture on @agentstore/dynamodb/testing', () => {
  it('crashes resume exactly once (DynamoDB Local, file-backed)', async () => {
    await torture({ trials: 3 });
  }, 150_000);
});
