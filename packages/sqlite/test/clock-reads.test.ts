import { isAgentStoreError } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { countedDatabase } from '../src/testing/round-trips.ts';
import { init, messages } from './helpers.ts';

/*
 * Leases are judged and stamped by the database's clock. Reading that clock with a statement of
 * its own cost one more statement on every lease-less append and every renewal; it is read inside
 * the statement that needs it instead.
 */

const opened: BetterSqlite3.Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

/** A store on a fresh database whose statements (BEGIN/COMMIT included) are counted. */
async function countedStore() {
  const db = new BetterSqlite3(':memory:');
  opened.push(db);
  let statements = 0;
  const store = sqliteStore({ database: countedDatabase(db, (n) => (statements += n)) });
  await store.migrate(); // prepares every statement up front
  return { store, db, statements: () => statements };
}

async function counting<T>(count: () => number, work: () => Promise<T>): Promise<[T, number]> {
  const before = count();
  const result = await work();
  return [result, count() - before];
}

describe('the database clock costs no statement of its own', () => {
  it('a lease-less append to an existing session: BEGIN, the guarded UPDATE, one INSERT, COMMIT', async () => {
    const { store, statements } = await countedStore();
    await store.append('s', {
      expectedSeq: 0,
      messages: messages('a', 1),
      session: { init: init() },
      lease: null,
    });
    const [, ran] = await counting(statements, () =>
      store.append('s', { expectedSeq: 1, messages: messages('b', 2), lease: null }),
    );
    expect(ran).toBe(4);
  });

  it('a renewal is one UPDATE that sets and returns the expiry by the database clock', async () => {
    const { store, statements } = await countedStore();
    const { epoch } = await store.acquireLease('s', { holder: 'h', ttlMs: 30_000, init: init() });
    const sent = Date.now();
    const [renewed, ran] = await counting(statements, () =>
      store.renewLease('s', { holder: 'h', epoch, ttlMs: 30_000 }),
    );
    expect(ran).toBe(1);
    // An ISO expiry one TTL from now (this process and SQLite read the same OS clock).
    expect(renewed.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const ahead = Date.parse(renewed.expiresAt) - sent;
    expect(ahead).toBeGreaterThanOrEqual(29_990);
    expect(ahead).toBeLessThanOrEqual(40_000);
    expect((await store.load('s'))!.session.lease!.expiresAt).toBe(renewed.expiresAt);
  });

  it('a renewal by a fenced holder still fails with LEASE_LOST and changes nothing', async () => {
    const { store } = await countedStore();
    const { epoch } = await store.acquireLease('s', { holder: 'h', ttlMs: 30_000, init: init() });
    const before = (await store.load('s'))!.session.lease;
    const error = await store
      .renewLease('s', { holder: 'h', epoch: epoch + 1, ttlMs: 30_000 })
      .catch((e) => e);
    expect(isAgentStoreError(error, 'LEASE_LOST')).toBe(true);
    expect((await store.load('s'))!.session.lease).toEqual(before);
  });

  it('a lease-less append under a live lease is refused with LEASE_LOST; after a release it lands', async () => {
    const { store } = await countedStore();
    const lease = await store.acquireLease('s', { holder: 'h', ttlMs: 30_000, init: init() });
    const refused = await store
      .append('s', { expectedSeq: 0, messages: messages('a', 1), lease: null })
      .catch((e) => e);
    expect(isAgentStoreError(refused, 'LEASE_LOST')).toBe(true);
    await store.releaseLease('s', { holder: 'h', epoch: lease.epoch });
    await store.append('s', { expectedSeq: 0, messages: messages('a', 1), lease: null });
    const loaded = (await store.load('s'))!;
    expect(loaded.session.headSeq).toBe(1);
    // Stamped by the database's clock, as ISO text.
    expect(Math.abs(Date.parse(loaded.session.updatedAt) - Date.now())).toBeLessThan(5_000);
  });
});
