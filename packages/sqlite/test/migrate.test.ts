import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, SCHEMA_VERSION, schemaStatements, sqliteStore } from '../src/index.ts';
import { init, messages, tempDatabaseDir } from './helpers.ts';

const tablesOf = (db: BetterSqlite3.Database) =>
  (
    db.prepare(`SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') ORDER BY name`).all() as {
      name: string;
    }[]
  ).map((r) => r.name);

describe('migrate', () => {
  const dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });

  it('creates the schema once, records its version, and is idempotent', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const db = new BetterSqlite3(dir.file());
    expect(migrate(db)).toEqual({ version: SCHEMA_VERSION });
    const after = tablesOf(db);
    expect(after).toEqual(
      expect.arrayContaining([
        'agentstore_sessions',
        'agentstore_messages',
        'agentstore_schema_version',
        'agentstore_sessions_owner_idx',
        'agentstore_sessions_tenant_idx',
        'agentstore_sessions_agent_idx',
      ]),
    );

    const store = sqliteStore({ database: db });
    await store.append('s1', {
      expectedSeq: 0,
      messages: messages('a', 2),
      lease: null,
      session: { init: init() },
    });
    expect(migrate(db)).toEqual({ version: SCHEMA_VERSION });
    expect(await store.migrate()).toEqual({ version: SCHEMA_VERSION });
    expect(tablesOf(db)).toEqual(after);
    expect(db.prepare('SELECT version FROM agentstore_schema_version').all()).toEqual([
      { version: SCHEMA_VERSION },
    ]);
    expect((await store.load('s1'))?.messages).toHaveLength(2);
    await store.close();
    db.close();
  });

  it('runs automatically on first use of a fresh file', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const store = sqliteStore({ path: dir.file() });
    expect(await store.load('nobody')).toBeNull();
    expect(tablesOf(store.database)).toContain('agentstore_messages');
    await store.close();
  });

  it('works on tables created from the exported DDL by other tooling', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const db = new BetterSqlite3(dir.file());
    for (const statement of schemaStatements({ tablePrefix: 'app_' })) db.exec(statement);
    const store = sqliteStore({ database: db }, { tablePrefix: 'app_' });
    await store.append('s1', { expectedSeq: 0, messages: messages('a', 1), lease: null });
    expect(await store.load('s1')).toMatchObject({ session: { headSeq: 1 } });
    await store.close();
    db.close();
  });

  it('refuses a schema newer than this package knows', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const db = new BetterSqlite3(dir.file());
    migrate(db);
    db.prepare('UPDATE agentstore_schema_version SET version = ?').run(SCHEMA_VERSION + 1);
    expect(() => migrate(db)).toThrow(expect.objectContaining({ code: 'SCHEMA_VERSION_UNSUPPORTED' }));
    await expect(sqliteStore({ database: db }).load('s1')).rejects.toMatchObject({
      code: 'SCHEMA_VERSION_UNSUPPORTED',
      found: SCHEMA_VERSION + 1,
    });
    db.close();
  });
});
