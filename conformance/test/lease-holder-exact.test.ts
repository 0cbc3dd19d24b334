import { afterAll, describe, expect, it } from 'vitest';
import { type CheckContext, leaseSpec } from '../src/index.ts';
import { looseHolderContext } from './support/loose-holder-store.ts';

const holderCheck = () => {
  const found = leaseSpec.checks.find((c) => c.name.startsWith('the lease holder is compared exactly'));
  if (!found) throw new Error('no lease-holder check');
  return found;
};

describe('renewLease and releaseLease compare the holder exactly', () => {
  const opened: CheckContext[] = [];
  afterAll(async () => {
    for (const ctx of opened) await ctx.store.close();
  });
  const open = async (collation?: 'RTRIM' | 'NOCASE') => {
    const ctx = await looseHolderContext(collation);
    opened.push(ctx);
    return ctx;
  };

  it.each([
    [
      'RTRIM',
      /renewLease by "alice-josé-holder-[0-9a-f]+ " for the holder "alice-josé-holder-[0-9a-f]+" \(epoch 1\) renewed the lease .* the holder was compared loosely, ignoring trailing spaces/,
    ],
    [
      'NOCASE',
      /renewLease by "ALICE-josé-holder-[0-9a-f]+" .* renewed the lease .* the holder was compared loosely, case-insensitively/,
    ],
  ] as const)(
    'a holder matched under %s is caught, and the message names the no-pad binary collation',
    async (collation, cause) => {
      const error = await holderCheck()
        .run(await open(collation))
        .catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).name).toBe('ConformanceViolation');
      expect((error as Error).message).toMatch(cause);
      expect((error as Error).message).toMatch(/utf8mb4_nopad_bin or a VARBINARY column on MariaDB\/MySQL/);
    },
  );

  it('the correct example store passes', async () => {
    await holderCheck().run(await open());
  });
});
