import { afterEach, describe, expect, it, vi } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { init, messages } from './helpers.ts';

/*
 * Retention deletes sessions idle since before a cutoff. Idleness must be judged by the store's
 * clock (here the database's), never by the clock of whichever process wrote last: a writer whose
 * clock runs 2 h behind must not make a session it just wrote look 2 h idle.
 */

const HOUR = 3_600_000;
afterEach(() => {
  vi.useRealTimers();
});

describe('retention judges idleness by the database clock, not the writer’s', () => {
  it('a session just written by a writer whose clock runs 2 h behind survives an "idle for 1 h" sweep', async () => {
    const store = sqliteStore({ path: ':memory:' });
    try {
      // The writer's clock: 2 h behind (only Date is faked; timers stay real).
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 2 * HOUR });
      const { epoch } = await store.acquireLease('leased', { holder: 'w', ttlMs: 60_000, init: init() });
      await store.append('leased', {
        expectedSeq: 0,
        messages: messages('a', 1),
        lease: { holder: 'w', epoch },
        releaseLease: true,
      });
      await store.append('lease-less', {
        expectedSeq: 0,
        messages: messages('b', 1),
        session: { init: init() },
        lease: null,
      });
      await store.append('lease-less', { expectedSeq: 1, messages: messages('c', 1), lease: null });
      vi.useRealTimers();
      // A correct sweeper, one second later.
      const idleBefore = new Date(Date.now() - HOUR).toISOString();
      const { deleted } = await store.deleteIdleSessions({ idleBefore, limit: 100 });
      expect(deleted).toEqual([]);
      for (const id of ['leased', 'lease-less']) {
        const loaded = await store.load(id);
        expect(Date.parse(loaded!.session.updatedAt)).toBeGreaterThan(Date.now() - HOUR);
      }
    } finally {
      await store.close();
    }
  });
});
