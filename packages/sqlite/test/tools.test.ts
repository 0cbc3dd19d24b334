import { join } from 'node:path';
import { isMeasured, runBench } from '@agentstore/bench';
import { runCleanTorture } from '@agentstore/torture';
import { describe, expect, it } from 'vitest';

// The tools open this package's published target module, as a user's command line would.
const target = join(import.meta.dirname, '../src/testing/index.ts');

describe('@agentstore/sqlite/testing through the tools', () => {
  it('agentstore-torture: SIGKILLed runs resume exactly once; two racers queue; a stopped worker is fenced', async () => {
    const report = await runCleanTorture({
      targets: [target],
      trials: 6,
      seed: 20_261_122,
      racers: [2],
      fenceTrials: 1,
    });
    const [sqlite] = report.stores;
    expect(sqlite!.race[0]).toMatchObject({ racers: 2, racersCompleted: 2, violations: 0 });
    expect(sqlite!.fence).toMatchObject({ trials: 1, staleAppendsRefused: 1 });
  }, 150_000);

  it('agentstore-bench: statements counted on the timed store and on the floor', async () => {
    const report = await runBench({ targets: [target], quick: true, concurrency: [1] });
    const [sqlite] = report.stores.filter(isMeasured);
    expect(sqlite!.server).toMatch(/^SQLite 3\.\d+/);
    expect(sqlite!.roundTrips).toMatchObject({
      method: 'driver',
      unit: expect.stringMatching(/SQLite statements/),
    });
    // One IMMEDIATE transaction (BEGIN, COMMIT) around the guarded UPDATE and one INSERT — the
    // store and its floor alike (the floor's INSERT is multi-row too).
    expect(sqlite!.roundTrips.perAppend).toBe(4);
    expect(sqlite!.roundTrips.floorPerAppend).toBe(4);
    // The settings the figures came from, read back from the connection, and the file system.
    expect(sqlite!.backend.settings).toEqual({ journal_mode: 'wal', synchronous: 'FULL' });
    expect(sqlite!.backend.storage?.fsType).toMatch(/\S/);
    expect(sqlite!.notes.join()).toMatch(/in-process/);
  }, 120_000);

  it('the floor commits as the store does: its connection takes the target’s synchronous level', async () => {
    const { default: open } = await import('../src/testing/index.ts');
    const target = await open({ synchronous: 'NORMAL' });
    try {
      expect((await target.durabilitySettings!()).settings).toEqual({
        journal_mode: 'wal',
        synchronous: 'NORMAL',
      });
    } finally {
      await target.close();
    }
  });
});
