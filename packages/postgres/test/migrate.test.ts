import { InvalidArgumentError } from '@agentstore/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrationSql, postgresStore } from '../src/index.ts';
import { MIGRATIONS, migrationsTableSql, recordMigrationSql, tableNames } from '../src/schema.ts';
import { freshSchema, init, message, uniqueId, usePostgres } from './harness.ts';

const server = usePostgres('migrate');

const ALL = MIGRATIONS.map((m) => m.version);

const versions = async (schema: string) =>
  (
    await server.pool.query(`SELECT version FROM "${schema}".agentstore_migrations ORDER BY version`)
  ).rows.map((r) => r.version);

describe('migrate', () => {
  it('is idempotent', async () => {
    const store = postgresStore({ pool: server.pool }, { schema: server.schema });
    expect(await store.migrate()).toEqual({ applied: ALL, version: LATEST_VERSION });
    expect(await store.migrate()).toEqual({ applied: [], version: LATEST_VERSION });
    expect(await versions(server.schema)).toEqual(ALL);
    const id = uniqueId();
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      session: { init: init() },
      lease: null,
    });
    expect((await store.load(id))?.session.headSeq).toBe(1);
  });

  it('upgrades a version-1 schema with data: adds the agent and activity indexes, keeps every session', async () => {
    const schema = freshSchema('v1');
    const names = tableNames(schema, 'agentstore_');
    try {
      await server.pool.query(`CREATE SCHEMA "${schema}"; ${migrationsTableSql(names)}`);
      await server.pool.query(MIGRATIONS[0]!.sql(names, 'agentstore_'));
      await server.pool.query(recordMigrationSql(names, MIGRATIONS[0]!));
      await server.pool.query(
        `INSERT INTO ${names.sessions} (id, agent_name, state, head_seq, created_at, updated_at)
         VALUES ('old', 'a', 'null', 1, '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z'),
                ('kept', 'a', 'null', 1, '2020-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z');
         INSERT INTO ${names.messages} (session_id, seq, body) VALUES
           ('old', 1, '{"id":"m1","role":"user","content":"x","createdAt":"2020-01-01T00:00:00.000Z"}'),
           ('kept', 1, '{"id":"m1","role":"user","content":"x","createdAt":"2020-01-01T00:00:00.000Z"}')`,
      );
      const store = postgresStore({ pool: server.pool }, { schema });
      expect(await store.migrate()).toEqual({ applied: ALL.slice(1), version: LATEST_VERSION });
      const { rows } = await server.pool.query(
        'SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
        [schema],
      );
      expect(rows.map((r) => r.indexname)).toEqual(
        expect.arrayContaining(['agentstore_sessions_agent_idx', 'agentstore_sessions_idle_idx']),
      );
      expect((await store.listSessions({ agentName: 'a', limit: 10 })).sessions.map((s) => s.id)).toEqual([
        'kept',
        'old',
      ]);
      const swept = await store.deleteIdleSessions({ idleBefore: '2021-01-01T00:00:00.000Z', limit: 10 });
      expect(swept).toEqual({ deleted: ['old'], nextCursor: null });
      expect((await store.load('kept'))?.messages).toHaveLength(1);
    } finally {
      await server.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('applies each version once when several processes migrate at once', async () => {
    const schema = freshSchema('race');
    // Separate pools: separate backends racing for the advisory lock.
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: server.url, max: 1 }));
    try {
      const results = await Promise.all(pools.map((pool) => postgresStore({ pool }, { schema }).migrate()));
      expect(results.flatMap((r) => r.applied).sort()).toEqual(ALL);
      expect(results.every((r) => r.version === LATEST_VERSION)).toBe(true);
      expect(await versions(schema)).toEqual(ALL);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await server.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('migrationSql() builds the same schema for your own migration tool; migrate() then has nothing to do', async () => {
    const schema = freshSchema('sql');
    try {
      const script = migrationSql({ schema, tablePrefix: 'app_' });
      await server.pool.query(script);
      await server.pool.query(script);
      const store = postgresStore({ pool: server.pool }, { schema, tablePrefix: 'app_' });
      expect(await store.migrate()).toEqual({ applied: [], version: LATEST_VERSION });
      const { rows } = await server.pool.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
        [schema],
      );
      expect(rows.map((r) => r.table_name)).toEqual(['app_messages', 'app_migrations', 'app_sessions']);
      const pk = await server.pool.query(
        `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
         WHERE c.conrelid = $1::regclass AND c.contype = 'p'`,
        [`"${schema}".app_messages`],
      );
      expect(pk.rows[0].def).toBe('PRIMARY KEY (session_id, seq)');
      const id = uniqueId();
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('a')],
        session: { init: init() },
        lease: null,
      });
      expect((await store.load(id))?.messages).toHaveLength(1);
    } finally {
      await server.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('refuses a schema newer than this package knows, changing nothing', async () => {
    const schema = freshSchema('newer');
    try {
      const store = postgresStore({ pool: server.pool }, { schema });
      await store.migrate();
      await server.pool.query(
        `INSERT INTO "${schema}".agentstore_migrations (version, description) VALUES (99, 'future')`,
      );
      await expect(store.migrate()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'schema' });
      expect(await versions(schema)).toEqual([...ALL, 99]);
    } finally {
      await server.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('keeps stores with different prefixes in one schema apart', async () => {
    const a = postgresStore({ pool: server.pool }, { schema: server.schema, tablePrefix: 'a_' });
    const b = postgresStore({ pool: server.pool }, { schema: server.schema, tablePrefix: 'b_' });
    await Promise.all([a.migrate(), b.migrate()]);
    const id = uniqueId();
    await a.append(id, { expectedSeq: 0, messages: [message('a')], session: { init: init() }, lease: null });
    expect(await b.load(id)).toBeNull();
    expect((await a.load(id))?.messages).toHaveLength(1);
  });
});

describe('identifiers', () => {
  const bad = ['Public', 'a-b', '1abc', 'a b', 'a"b', 'a;drop', 'x'.repeat(64), '', 'é'];
  it.each(bad)('rejects schema %j with InvalidArgumentError', (schema) => {
    expect(() => postgresStore({ pool: server.pool }, { schema })).toThrow(InvalidArgumentError);
    expect(() => migrationSql({ schema })).toThrow(InvalidArgumentError);
  });

  it.each(bad.filter((p) => p !== ''))('rejects tablePrefix %j with InvalidArgumentError', (tablePrefix) => {
    expect(() => postgresStore({ pool: server.pool }, { tablePrefix })).toThrow(InvalidArgumentError);
    expect(() => migrationSql({ tablePrefix })).toThrow(InvalidArgumentError);
  });

  it('accepts the strict pattern, an empty prefix, and rejects a target that is neither pool nor URL', () => {
    expect(() => postgresStore({ pool: server.pool }, { schema: 'app_1', tablePrefix: '' })).not.toThrow();
    expect(migrationSql({ schema: 'app_1', tablePrefix: 'x_' })).toContain('"app_1"."x_sessions"');
    expect(() => postgresStore({} as never)).toThrow(InvalidArgumentError);
    expect(() => postgresStore({ pool: server.pool }, { preparedStatements: 'no' as never })).toThrow(
      InvalidArgumentError,
    );
  });
});
