import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { redisStore } from '../src/index.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

/*
 * Retention deletes sessions idle since before a cutoff. Idleness must be judged by the store's
 * clock (the server's TIME), never by the clock of whichever process wrote last: a writer whose
 * clock runs 2 h behind must not make a session it just wrote look idle.
 */

const HOUR = 3_600_000;
let server: LaunchedRedis;
beforeAll(async () => {
  server = await launchRedis();
});
afterAll(() => server?.stop());
afterEach(() => {
  vi.useRealTimers();
});

describe('retention judges idleness by the server clock, not the writer’s', () => {
  it('sessions just written by a writer whose clock runs 2 h behind survive an "idle for 1 h" sweep', async () => {
    const store = redisStore({ url: server.info.url }, { keyPrefix: uniquePrefix('clock') });
    try {
      await store.listSessions({ limit: 1 }); // connected and checked before the clock moves
      // The writer's clock: 2 h behind (only Date is faked; timers and the server stay real).
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 2 * HOUR });
      const { epoch } = await store.acquireLease('leased', { holder: 'w', ttlMs: 60_000, init: init() });
      await store.append('leased', {
        expectedSeq: 0,
        messages: [msg()],
        lease: { holder: 'w', epoch },
        releaseLease: true,
      });
      await store.append('lease-less', {
        expectedSeq: 0,
        messages: [msg()],
        session: { init: init() },
        lease: null,
      });
      await store.append('lease-less', { expectedSeq: 1, messages: [msg()], lease: null });
      vi.useRealTimers();
      // A correct sweeper, a moment later.
      const idleBefore = new Date(Date.now() - HOUR).toISOString();
      const { deleted } = await store.deleteIdleSessions({ idleBefore, limit: 100 });
      expect(deleted).toEqual([]);
      for (const id of ['leased', 'lease-less']) {
        const { session } = (await store.load(id))!;
        // The server's time, written as toISOString() would write it.
        expect(session.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(new Date(session.updatedAt).toISOString()).toBe(session.updatedAt);
        expect(Math.abs(Date.parse(session.updatedAt) - Date.now())).toBeLessThan(60_000);
        expect(Math.abs(Date.parse(session.createdAt) - Date.now())).toBeLessThan(60_000);
      }
    } finally {
      await store.close();
    }
  });
});
