import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresStore, postgresStore } from '../src/index.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const server = usePostgres('trips');

/** Counts every query any connection of the pool sends: one round trip each. */
function countingPool(url: string) {
  const counts = { client: 0 };
  class CountingClient extends pg.Client {
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads are forwarded untouched.
    override query(...args: any[]): any {
      counts.client += 1;
      // biome-ignore lint/suspicious/noExplicitAny: see above.
      return (super.query as any)(...args);
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: 2, Client: CountingClient });
  return { pool, counts };
}

describe.each([{ preparedStatements: true }, { preparedStatements: false }])(
  'round trips per operation (preparedStatements: $preparedStatements)',
  (options) => {
    let counted: ReturnType<typeof countingPool>;
    let store: PostgresStore;

    beforeAll(async () => {
      counted = countingPool(server.url);
      store = postgresStore({ pool: counted.pool }, { schema: server.schema, ...options });
      await store.migrate();
    });
    afterAll(async () => {
      await counted.pool.end();
    });

    /** Runs `op` and returns how many queries it sent. */
    async function trips(op: () => Promise<unknown>): Promise<number> {
      const before = counted.counts.client;
      await op();
      return counted.counts.client - before;
    }

    it('append, load, lease calls and listSessions are one query each, creating or not', async () => {
      const id = uniqueId();
      expect(await trips(() => store.acquireLease(id, { holder: 'h', ttlMs: 60_000, init: init() }))).toBe(1);
      const lease = { holder: 'h', epoch: 1 };
      expect(await trips(() => store.append(id, { expectedSeq: 0, messages: [message('a')], lease }))).toBe(
        1,
      );
      for (let seq = 1; seq < 5; seq++) {
        const messages = [message(`m${seq}a`), message(`m${seq}b`), message(`m${seq}c`)];
        expect(await trips(() => store.append(id, { expectedSeq: 1 + (seq - 1) * 3, messages, lease }))).toBe(
          1,
        );
      }
      expect(await trips(() => store.load(id))).toBe(1);
      expect(await trips(() => store.load(id, { afterSeq: 3 }))).toBe(1);
      expect(await trips(() => store.renewLease(id, { ...lease, ttlMs: 60_000 }))).toBe(1);
      expect(await trips(() => store.releaseLease(id, lease))).toBe(1);
      expect(await trips(() => store.listSessions({ limit: 10 }))).toBe(1);
      // Creating the session in the append itself is still one statement.
      const fresh = uniqueId();
      const first = { expectedSeq: 0, messages: [message('x')], session: { init: init() }, lease: null };
      expect(await trips(() => store.append(fresh, first))).toBe(1);
    });

    it('a refused append is one query too, and its error carries the facts', async () => {
      const id = uniqueId();
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('a')],
        session: { init: init() },
        lease: null,
      });
      let error: unknown;
      const count = await trips(async () => {
        error = await store
          .append(id, { expectedSeq: 0, messages: [message('b')], lease: null })
          .catch((e) => e);
      });
      expect(count).toBe(1);
      expect(error).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 1 });
      const refusedLease = await trips(async () => {
        error = await store
          .append(id, { expectedSeq: 1, messages: [message('b')], lease: { holder: 'x', epoch: 7 } })
          .catch((e) => e);
      });
      expect(refusedLease).toBe(1);
      expect(error).toMatchObject({ code: 'LEASE_LOST' });
    });
  },
);
