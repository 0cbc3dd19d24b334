import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeSqliteStore } from '../../../docs/examples/custom-store/node-sqlite-store.ts';
import { runTorture } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'agentstore-torture-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', `${name}.ts`);

/** A fresh database file the fixture targets open (workers inherit the variable). */
function freshDatabase(): string {
  const path = join(dir, `${crypto.randomUUID()}.db`);
  process.env.TORTURE_TEST_DB = path;
  return path;
}

describe('lease-less append races, and what the torture leaves behind', () => {
  it('a correct store: 3 processes racing appends without leases keep every acknowledged append once; no session is left', async () => {
    const path = freshDatabase();
    const report = await runTorture({
      targets: [fixture('file-target')],
      trials: 1,
      seed: 20_261_128,
      racers: [2],
      fenceTrials: 0,
      partitionTrials: 0,
    });
    expect(report.violations).toEqual([]);
    expect(report.stores[0]!.appendRace).toMatchObject({
      trials: 1,
      racers: 3,
      acknowledged: 90,
      violations: 0,
    });
    const store = nodeSqliteStore({ path });
    try {
      expect((await store.listSessions({ limit: 100 })).sessions).toEqual([]);
    } finally {
      await store.close();
    }
  }, 150_000);

  it('a store with neither a unique key on (session, seq) nor a row lock is caught by the append race', async () => {
    freshDatabase();
    const report = await runTorture({
      targets: [fixture('unguarded-append-target')],
      trials: 1,
      seed: 20_261_128,
      fenceTrials: 0,
      partitionTrials: 0,
    });
    const raced = report.violations.filter((v) => v.scenario === 'append-race');
    expect(raced.length).toBeGreaterThan(0);
    expect(raced.map((v) => v.message).join('\n')).toMatch(
      /seqs (were each acknowledged to more than one append|hold more than one message row) .* — the store checks the head \(and the lease\) outside its write/,
    );
    // Lease-serialised runs alone do not see it.
    expect(report.violations.filter((v) => v.scenario === 'crash')).toEqual([]);
  }, 150_000);
});
