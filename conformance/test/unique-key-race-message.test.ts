import { afterAll, describe, expect, it } from 'vitest';
import { type CheckContext, concurrencySpec } from '../src/index.ts';
import { unlockedCheckContext } from './support/unlocked-check-store.ts';

const check = (name: string) => {
  const found = concurrencySpec.checks.find((c) => c.name.startsWith(name));
  if (!found) throw new Error(`no check named ${name}`);
  return found;
};

const CAUSE =
  /failed with the database's unique-key error \(Error \(code ERR_SQLITE_ERROR\): UNIQUE constraint failed: agent_messages\.session_id, agent_messages\.seq\), not SeqConflictError — the database's unique key on \(session, seq\) caught a race the store's own check missed.* the head is checked outside the write transaction, or inside a READ COMMITTED transaction without a row lock \(SELECT … FOR UPDATE\)/;

describe('a race lost on the unique key, not the seq check, is named for its likely cause', () => {
  const opened: CheckContext[] = [];
  afterAll(async () => {
    for (const ctx of opened) await ctx.store.close();
  });
  const open = async (unlocked: boolean) => {
    const ctx = await unlockedCheckContext(unlocked);
    opened.push(ctx);
    return ctx;
  };

  it.each(['of 8 concurrent appends with the same expectedSeq', 'writers that retry on SeqConflictError'])(
    '%s: a head check outside the write transaction is named, with no driver dump',
    async (name) => {
      const error = (await check(name)
        .run(await open(true))
        .catch((e: unknown) => e)) as Error;
      expect(error.name).toBe('ConformanceViolation');
      expect(error.message).toMatch(CAUSE);
      // One line of the driver's error, not its whole object.
      expect(error.message).not.toMatch(/errcode|errstr|\n/);
    },
  );

  it('the correct example store passes both', async () => {
    const ctx = await open(false);
    await check('of 8 concurrent appends with the same expectedSeq').run(ctx);
    await check('writers that retry on SeqConflictError').run(ctx);
  });
});
