import { isAgentStoreError } from '@agentstore/core';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PostgresStore, postgresStore } from '../src/index.ts';
import { tableNames } from '../src/schema.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const server = usePostgres('refusal');

/** An append that creates the session, with one message. */
const firstAppend = (label: string) => ({
  expectedSeq: 0,
  messages: [message(label)],
  session: { init: init() },
  lease: null,
});

/*
 * A refused append is explained by what the refusing statement itself saw (it raises its facts),
 * never by a later read: by then the lease may be released or expired, or the session re-created,
 * and a refusal by the lease would come back as a seq conflict at an unchanged head. An attack on
 * a version that read afterwards found that in about half of these races.
 */
describe('a refused append names its real cause', () => {
  let store: PostgresStore;
  beforeAll(async () => {
    store = await server.store();
  });

  it('a lease-less append racing the holder’s release is granted or refused as LEASE_LOST, never a seq conflict', async () => {
    const outcomes = { granted: 0, leaseLost: 0 };
    for (let round = 0; round < 200; round++) {
      const id = uniqueId('race');
      const { epoch } = await store.acquireLease(id, { holder: 'h', ttlMs: 60_000, init: init() });
      const [appended] = await Promise.allSettled([
        store.append(id, { expectedSeq: 0, messages: [message('m')], lease: null }),
        store.releaseLease(id, { holder: 'h', epoch }),
      ]);
      const stored = (await store.load(id))!.session.headSeq;
      if (appended.status === 'fulfilled') {
        outcomes.granted += 1;
        expect(stored).toBe(1);
      } else {
        expect(isAgentStoreError(appended.reason, 'LEASE_LOST'), String(appended.reason)).toBe(true);
        expect(stored).toBe(0);
        outcomes.leaseLost += 1;
      }
    }
    expect(outcomes.granted + outcomes.leaseLost).toBe(200);
  });

  /*
   * The append has four statements: creating or not, one message (bound as its JSON) or several
   * (one JSON array). Each must write exactly its rows when granted, and raise the refusal, not
   * insert nothing quietly, when refused by the seq or by the lease: read back through plain SQL.
   */
  it.each([
    ['one message', 1],
    ['several messages', 3],
  ])(
    'every append statement with %s writes exactly its rows when granted and nothing when refused',
    async (_, count) => {
      const id = uniqueId('shapes');
      const batch = (label: string) => Array.from({ length: count }, (_, i) => message(`${label}-${i}`));
      const stored = async () => {
        const { rows } = await server.pool.query<{ seq: string; body: string }>(
          `SELECT seq, body FROM ${tableNames(server.schema, 'agentstore_').messages} WHERE session_id = $1 ORDER BY seq`,
          [id],
        );
        return rows.map((row) => [Number(row.seq), (JSON.parse(row.body) as { id: string }).id]);
      };
      const ids = (label: string, from: number) => batch(label).map((m, i) => [from + i, m.id]);
      // The creating statement: refused by a seq, then granted.
      const notCreated = await store
        .append(id, { expectedSeq: 0, messages: batch('early'), lease: { holder: 'h', epoch: 1 } })
        .catch((e: unknown) => e);
      expect(notCreated).toMatchObject({ code: 'LEASE_LOST' });
      expect(await stored()).toEqual([]);
      await store.append(id, {
        expectedSeq: 0,
        messages: batch('a'),
        session: { init: init() },
        lease: null,
      });
      expect(await stored()).toEqual(ids('a', 1));
      // The creating statement again, on a session that exists: a seq conflict at the real head.
      const again = await store
        .append(id, { expectedSeq: 0, messages: batch('again'), lease: null })
        .catch((e: unknown) => e);
      expect(again).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: count });
      // The later statement: granted, refused by the seq, refused by the lease.
      await store.append(id, { expectedSeq: count, messages: batch('b'), lease: null });
      const stale = await store
        .append(id, { expectedSeq: count, messages: batch('stale'), lease: null })
        .catch((e: unknown) => e);
      expect(stale).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 2 * count });
      const { epoch } = await store.acquireLease(id, { holder: 'h', ttlMs: 60_000, init: init() });
      const fenced = await store
        .append(id, {
          expectedSeq: 2 * count,
          messages: batch('fenced'),
          lease: { holder: 'h', epoch: epoch - 1 },
        })
        .catch((e: unknown) => e);
      expect(fenced).toMatchObject({ code: 'LEASE_LOST' });
      expect(await stored()).toEqual([...ids('a', 1), ...ids('b', count + 1)]);
    },
  );

  it('a refused append keeps its pooled connection (pg destroys a client whose query failed)', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    let connects = 0;
    pool.on('connect', () => {
      connects += 1;
    });
    try {
      const own = postgresStore({ pool }, { schema: server.schema });
      const id = uniqueId('churn');
      await own.append(id, firstAppend('a'));
      const before = connects;
      for (let i = 0; i < 20; i++) {
        const error = await own
          .append(id, { expectedSeq: 0, messages: [message(`stale-${i}`)], lease: null })
          .catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 1 });
      }
      expect((await own.load(id))!.session.headSeq).toBe(1);
      expect(connects - before).toBe(0);
    } finally {
      await pool.end();
    }
  });

  /*
   * READ COMMITTED re-checks the guard on the newest row version once the row is locked, which
   * the statement's snapshot may not show: a lease taken while the append waited for the row.
   * The successor's acquire is held in an open transaction until the append is waiting on it.
   */
  async function heldAcquire(id: string, holder: string) {
    const client = await server.pool.connect();
    await client.query('BEGIN');
    const inTransaction = { query: client.query.bind(client), connect: async () => client, on() {} };
    const successor = postgresStore({ pool: inTransaction as unknown as pg.Pool }, { schema: server.schema });
    const { epoch } = await successor.acquireLease(id, { holder, ttlMs: 60_000, init: init() });
    return {
      epoch,
      async commitOnceBlocked() {
        for (let i = 0; ; i++) {
          const { rows } = await server.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%refuse_append%'",
          );
          if (rows[0]!.n > 0) break;
          if (i > 3000) throw new Error('the append never waited for the row'); // 30 s: only a lost append ends here
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await client.query('COMMIT');
        client.release();
      },
    };
  }

  it('a fenced writer whose successor takes the lease while its append waits for the row gets LEASE_LOST', async () => {
    const id = uniqueId('fenced');
    const a = await store.acquireLease(id, { holder: 'a', ttlMs: 50, init: init() });
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a1')],
      lease: { holder: 'a', epoch: a.epoch },
    });
    await new Promise((resolve) => setTimeout(resolve, 80)); // a's lease lapses; a does not know
    const successor = await heldAcquire(id, 'b');
    const stale = store
      .append(id, { expectedSeq: 1, messages: [message('stale')], lease: { holder: 'a', epoch: a.epoch } })
      .catch((e: unknown) => e);
    await successor.commitOnceBlocked();
    expect(await stale).toMatchObject({ code: 'LEASE_LOST' });
    const loaded = (await store.load(id))!;
    expect(loaded.session.headSeq).toBe(1);
    expect(loaded.session.lease).toMatchObject({ holder: 'b', epoch: successor.epoch });
  });

  it('a lease-less append while another process takes the lease gets LEASE_LOST', async () => {
    const id = uniqueId('free');
    await store.append(id, firstAppend('m1'));
    const successor = await heldAcquire(id, 'b');
    const pending = store
      .append(id, { expectedSeq: 1, messages: [message('m2')], lease: null })
      .catch((e: unknown) => e);
    await successor.commitOnceBlocked();
    expect(await pending).toMatchObject({ code: 'LEASE_LOST' });
    expect((await store.load(id))!.session.headSeq).toBe(1);
  });

  it('no hooks: a fenced writer racing its successor’s acquire is granted (before it) or refused as LEASE_LOST', async () => {
    const wrong: unknown[] = [];
    for (let round = 0; round < 100; round++) {
      const id = uniqueId('fence-race');
      const a = await store.acquireLease(id, { holder: 'a', ttlMs: 10, init: init() });
      await new Promise((resolve) => setTimeout(resolve, 14));
      const [appended] = await Promise.allSettled([
        store.append(id, {
          expectedSeq: 0,
          messages: [message('s')],
          lease: { holder: 'a', epoch: a.epoch },
        }),
        store.acquireLease(id, { holder: 'b', ttlMs: 60_000, init: init() }),
      ]);
      if (appended.status === 'rejected' && !isAgentStoreError(appended.reason, 'LEASE_LOST'))
        wrong.push(appended.reason);
    }
    expect(wrong).toEqual([]);
  });

  it('a role without EXECUTE on the refusal function gets StoreConfigurationError saying what to grant', async () => {
    const role = `agentstore_noexec_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
    const fn = tableNames(server.schema, 'agentstore_').refuseAppend;
    await server.pool.query(`CREATE ROLE ${role} LOGIN`);
    await server.pool.query(`GRANT USAGE ON SCHEMA "${server.schema}" TO ${role}`);
    await server.pool.query(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${server.schema}" TO ${role}`,
    );
    await server.pool.query(`REVOKE EXECUTE ON FUNCTION ${fn}(text, text) FROM PUBLIC`);
    const url = new URL(server.url);
    url.username = role;
    url.password = '';
    const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    try {
      const limited = postgresStore({ pool }, { schema: server.schema });
      const id = uniqueId('noexec');
      const error = await limited
        .append(id, { expectedSeq: 0, messages: [message('a')], session: { init: init() }, lease: null })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'STORE_CONFIGURATION',
        problem: 'refusal-function-not-executable',
      });
      expect(String((error as Error).message)).toMatch(/GRANT EXECUTE/);
      expect(await store.load(id)).toBeNull();
    } finally {
      await pool.end();
      await server.pool.query(`GRANT EXECUTE ON FUNCTION ${fn}(text, text) TO PUBLIC`);
      await server.pool.query(`DROP OWNED BY ${role}`);
      await server.pool.query(`DROP ROLE ${role}`);
    }
  });

  it('a schema from before the refusal function gets SchemaMissingError saying to migrate, and nothing is written', async () => {
    const schema = `agentstore_refusal_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const old = postgresStore({ pool: server.pool }, { schema });
    await old.migrate();
    await server.pool.query(`DROP FUNCTION ${tableNames(schema, 'agentstore_').refuseAppend}(text, text)`);
    await server.pool.query(`DELETE FROM "${schema}".agentstore_migrations WHERE version = 4`);
    try {
      const id = uniqueId('old-schema');
      const first = firstAppend('a');
      const error = await old.append(id, first).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'SCHEMA_MISSING' });
      expect(String((error as Error).message)).toMatch(/migrate\(\)/);
      expect(await old.load(id)).toBeNull();
      // migrate() brings it back, and the same append then lands.
      expect((await old.migrate()).applied).toEqual([4]);
      expect(await old.append(id, first)).toEqual({ headSeq: 1 });
    } finally {
      await server.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});
