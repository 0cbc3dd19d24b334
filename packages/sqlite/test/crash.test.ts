import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { sqliteCapabilities } from '../src/testing/capabilities.ts';
import { runFixture } from './fixtures/spawn-fixture.ts';
import { messages, tempDatabaseDir } from './helpers.ts';

const dir = tempDatabaseDir();
afterAll(() => dir.cleanup());

describe('a process killed mid-transaction', () => {
  it('leaves no trace of the interrupted append, and the next writer proceeds', async () => {
    const path = dir.file();
    const exit = await runFixture('crash-writer.ts', [path, 'crashed']);
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    const [, before, atCrash] =
      /^appending with WAL at (\d+)\ncrashing with WAL at (\d+)\n$/.exec(exit.stdout) ?? [];
    // The interrupted transaction's pages reached the WAL, without a commit record.
    expect(Number(atCrash)).toBeGreaterThan(Number(before));

    const store = sqliteStore({ path });
    const loaded = await store.load('crashed');
    expect(loaded?.session).toMatchObject({ headSeq: 1, state: 'before' });
    expect(loaded?.messages.map((m) => m.id)).toEqual(['m1']);
    const caps = sqliteCapabilities({ connection: { path } });
    expect((await caps.raw!.messages('crashed')).map((m) => m.seq)).toEqual([1]);
    caps.close();

    expect(
      await store.append('crashed', { expectedSeq: 1, messages: messages('next', 2), lease: null }),
    ).toEqual({
      headSeq: 3,
    });
    await store.close();
  });
});
