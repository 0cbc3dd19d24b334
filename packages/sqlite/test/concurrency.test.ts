import { SeqConflictError } from '@agentstore/core';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { sqliteCapabilities } from '../src/testing/capabilities.ts';
import { runFixture } from './fixtures/spawn-fixture.ts';
import { messages, tempDatabaseDir } from './helpers.ts';

const dir = tempDatabaseDir();
afterAll(() => dir.cleanup());

describe('several connections on one file', () => {
  it('lets exactly one of two stores win an append at the same expectedSeq', async () => {
    const a = sqliteStore({ path: dir.file() });
    const b = sqliteStore({ path: dir.file() });
    await a.append('shared', { expectedSeq: 0, messages: messages('first', 1), lease: null });
    for (let round = 0; round < 5; round++) {
      const head = (await b.load('shared'))!.session.headSeq;
      const results = await Promise.allSettled([
        a.append('shared', { expectedSeq: head, messages: messages(`a${round}`, 2), lease: null }),
        b.append('shared', { expectedSeq: head, messages: messages(`b${round}`, 1), lease: null }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(SeqConflictError);
      expect((lost[0] as PromiseRejectedResult).reason.actualSeq).toBe(
        (won[0] as PromiseFulfilledResult<{ headSeq: number }>).value.headSeq,
      );
    }
    await a.close();
    await b.close();
  });

  it('keeps seqs contiguous and every win exactly once when processes race on one session', async () => {
    const path = dir.file('race.db');
    // Create the schema first, so the racers do not all migrate at once (that is tested by them anyway).
    await sqliteStore({ path }).migrate();
    const writers = ['w1', 'w2', 'w3'];
    const attempts = 40;
    const exits = await Promise.all(
      writers.map((w) => runFixture('race-writer.ts', [path, 'race', w, String(attempts)])),
    );
    for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    const tallies = exits.map((e) => JSON.parse(e.stdout) as { wins: number; conflicts: number });
    for (const t of tallies) expect(t.wins + t.conflicts).toBe(attempts);
    const totalWins = tallies.reduce((sum, t) => sum + t.wins, 0);

    const caps = sqliteCapabilities({ connection: { path } });
    const rows = await caps.raw!.messages('race');
    expect((await caps.raw!.session('race'))?.headSeq).toBe(totalWins);
    caps.close();
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(totalWins);
    writers.forEach((w, i) => {
      expect(rows.filter((r) => r.content === w)).toHaveLength(tallies[i]!.wins);
    });
  });
});
