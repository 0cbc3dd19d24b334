import { sqliteTableNames as tableNames } from '@agentstore/sqlite-dialect';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, SCHEMA_VERSION, sqliteStore } from '../src/index.ts';
import { listStatementCache, prepareStatements } from '../src/statements.ts';

/*
 * Query plans of listing, retention and load on 20,000 sessions (2,000 owners, 50 tenants,
 * 10 agents) with statistics (ANALYZE): each must search an index, never scan the table or
 * sort in a temp b-tree.
 */
describe('SQLite plans at size', () => {
  const db = new Database(':memory:');
  const t = tableNames();
  let list: ReturnType<typeof listStatementCache>;
  let s: ReturnType<typeof prepareStatements>;

  beforeAll(() => {
    migrate(db);
    db.exec(`
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
INSERT INTO ${t.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
SELECT printf('s-%06d', n), 'agent-' || (n % 10), 'owner-' || (n % 2000), 'tenant-' || (n % 50), '{}', 0,
  strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + n, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + 2 * n, 'unixepoch')
FROM g;
ANALYZE;`);
    list = listStatementCache(db, t);
    s = prepareStatements(db, t);
  });
  afterAll(() => db.close());

  const plan = (sql: string, params: unknown[]) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);

  function expectIndexSearch(details: string[], index: string) {
    const text = details.join(' | ');
    expect(text).toMatch(
      new RegExp(`SEARCH ${t.sessions.replaceAll('"', '')} USING (COVERING )?INDEX ${index}`),
    );
    expect(text).not.toMatch(/TEMP B-TREE/);
    expect(text).not.toMatch(/^SCAN|\| SCAN/);
  }

  const cases: [string, { ownerId?: string; tenantId?: string; agentName?: string }, string][] = [
    ['owner', { ownerId: 'owner-7' }, 'agentstore_sessions_owner_idx'],
    ['tenant', { tenantId: 'tenant-7' }, 'agentstore_sessions_tenant_idx'],
    ['agent name', { agentName: 'agent-7' }, 'agentstore_sessions_agent_idx'],
    ['absent tenant', { tenantId: 'nobody' }, 'agentstore_sessions_tenant_idx'],
    [
      'owner and tenant',
      { ownerId: 'owner-7', tenantId: 'tenant-7' },
      'agentstore_sessions_owner_tenant_idx',
    ],
    ['owner and agent', { ownerId: 'owner-7', agentName: 'agent-7' }, 'agentstore_sessions_owner_agent_idx'],
    [
      'tenant and agent',
      { tenantId: 'tenant-7', agentName: 'agent-7' },
      'agentstore_sessions_tenant_agent_idx',
    ],
    [
      'owner, tenant and agent',
      { ownerId: 'owner-7', tenantId: 'tenant-7', agentName: 'agent-7' },
      'agentstore_sessions_owner_tenant_agent_idx',
    ],
  ];
  for (const [what, filter, index] of cases) {
    for (const withCursor of [false, true]) {
      it(`listSessions by ${what}${withCursor ? ' after a cursor' : ''} searches ${index}`, () => {
        const params = [...Object.values(filter), ...(withCursor ? ['s-010000'] : []), 21];
        expectIndexSearch(plan(list(filter, withCursor).source, params), index);
      });
    }
  }

  it('deleteIdleSessions pages through the activity index, from the start and after a cursor', () => {
    const cutoff = '2026-01-01T03:00:00.000Z';
    expectIndexSearch(plan(s.idleCandidates.source, [cutoff, 100]), 'agentstore_sessions_idle_idx');
    expectIndexSearch(
      plan(s.idleCandidatesAfter.source, [cutoff, '2026-01-01T01:00:00.000Z', 's-001800', 100]),
      'agentstore_sessions_idle_idx',
    );
  });

  it('load reads the messages by their primary key, in order, without a sort', () => {
    const text = plan(s.selectMessages.source, [{ sessionId: 's-000001', afterSeq: 0 }]).join(' | ');
    // The (session_id, seq) primary key: the table's own b-tree, or its index on a rowid table.
    expect(text).toMatch(
      /SEARCH agentstore_messages USING (PRIMARY KEY|INDEX sqlite_autoindex_agentstore_messages_1) \(session_id=\? AND seq>\?\)/,
    );
    expect(text).not.toMatch(/TEMP B-TREE/);
  });

  it('a version-1 database upgrades: the activity index appears and retention works on old sessions', async () => {
    const old = new Database(':memory:');
    try {
      migrate(old);
      old.exec(`DROP INDEX "agentstore_sessions_idle_idx"; UPDATE ${t.schemaVersion} SET version = 1`);
      old
        .prepare(
          `INSERT INTO ${t.sessions} (id, agent_name, state, head_seq, created_at, updated_at)
           VALUES ('old', 'a', 'null', 0, '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z')`,
        )
        .run();
      expect(migrate(old)).toEqual({ version: SCHEMA_VERSION });
      const indexes = old.prepare(`SELECT name FROM sqlite_master WHERE type = 'index'`).all() as {
        name: string;
      }[];
      expect(indexes.map((i) => i.name)).toContain('agentstore_sessions_idle_idx');
      const store = sqliteStore({ database: old });
      expect(await store.deleteIdleSessions({ idleBefore: '2021-01-01T00:00:00.000Z', limit: 5 })).toEqual({
        deleted: ['old'],
        nextCursor: null,
      });
    } finally {
      old.close();
    }
  });
});
