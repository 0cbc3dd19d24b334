import type { NewMessage } from '@agentstore/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { usePostgres } from './harness.ts';

/*
 * Retention deletes sessions idle since before a cutoff. Idleness must be judged by the store's
 * clock (the server's), never by the clock of whichever process wrote last: a writer whose clock
 * runs 2 h behind must not make a session it just wrote (or created 3 h ago) look idle.
 */

const HOUR = 3_600_000;
const pg = usePostgres('retention_clock');
const init = { agentName: 'agent', ownerId: null, tenantId: null, state: null };
const message = (id: string): NewMessage => ({ id, role: 'user', content: id, createdAt: 'x' });

afterEach(() => {
  vi.useRealTimers();
});

describe('retention judges idleness by the server clock, not the writer’s', () => {
  it('sessions just written by a writer whose clock runs 2 h behind survive an "idle for 1 h" sweep', async () => {
    const store = await pg.store();
    // The writer's clock: 2 h behind (only Date is faked; timers and the server stay real).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 2 * HOUR });
    const { epoch } = await store.acquireLease('leased', { holder: 'w', ttlMs: 60_000, init });
    await store.append('leased', {
      expectedSeq: 0,
      messages: [message('a')],
      lease: { holder: 'w', epoch },
      releaseLease: true,
    });
    await store.append('lease-less', {
      expectedSeq: 0,
      messages: [message('b')],
      session: { init },
      lease: null,
    });
    await store.append('lease-less', { expectedSeq: 1, messages: [message('c')], lease: null });
    vi.useRealTimers();
    // A correct sweeper, a moment later.
    const idleBefore = new Date(Date.now() - HOUR).toISOString();
    const { deleted } = await store.deleteIdleSessions({ idleBefore, limit: 100 });
    expect(deleted).toEqual([]);
    for (const id of ['leased', 'lease-less']) {
      const loaded = await store.load(id);
      expect(Date.parse(loaded!.session.updatedAt)).toBeGreaterThan(Date.now() - HOUR);
    }
  });
});
