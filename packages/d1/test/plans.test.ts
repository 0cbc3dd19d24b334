import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type D1AgentStore, d1Store } from '../src/index.ts';
import { launchTestD1 } from './launch.ts';

/*
 * Query plans on the D1 engine (miniflare's workerd SQLite) with 5,000 sessions and statistics:
 * listing with each filter and the retention page search an index, never scan or sort.
 */
let server: Awaited<ReturnType<typeof launchTestD1>>;
let store: D1AgentStore;

beforeAll(async () => {
  server = await launchTestD1();
  store = d1Store({ binding: server.db }, { tablePrefix: 'plans_' });
  await store.migrate();
  const t = store.tables;
  await server.db
    .prepare(
      `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
       INSERT INTO ${t.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
       SELECT printf('s-%06d', n), 'agent-' || (n % 10), 'owner-' || (n % 500), 'tenant-' || (n % 50), '{}', 0,
         strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + n, 'unixepoch'),
         strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + 2 * n, 'unixepoch')
       FROM g`,
    )
    .all();
  await server.db.prepare('ANALYZE').all();
}, 60_000);
afterAll(() => server?.stop());

async function plan(sql: string, ...values: unknown[]): Promise<string> {
  const { results } = await server.db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...values)
    .all<{ detail: string }>();
  return results.map((r) => r.detail).join(' | ');
}

describe('D1 plans at size', () => {
  const t = () => store.tables;
  // Plans name tables and indexes without the quotes of the shared SQLite dialect's identifiers.
  const unquoted = () => `${store.tables.prefix}sessions`;
  for (const [column, value, index] of [
    ['owner_id', 'owner-7', 'owner_idx'],
    ['tenant_id', 'tenant-7', 'tenant_idx'],
    ['agent_name', 'agent-7', 'agent_idx'],
  ] as const) {
    it(`listSessions by ${column} searches the ${index} index, no scan, no temp sort`, async () => {
      // The statement listSessions builds for one filter and a cursor.
      const text = await plan(
        `SELECT * FROM ${t().sessions} WHERE ${column} IS ?1 AND id > ?2 ORDER BY id LIMIT ?3`,
        value,
        's-001000',
        21,
      );
      expect(text).toMatch(new RegExp(`SEARCH ${unquoted()} USING (COVERING )?INDEX ${unquoted()}_${index}`));
      expect(text).not.toMatch(/TEMP B-TREE|^SCAN/);
    });
  }

  for (const [columns, values, index] of [
    [['owner_id', 'tenant_id'], ['owner-7', 'tenant-7'], 'owner_tenant_idx'],
    [['owner_id', 'agent_name'], ['owner-7', 'agent-7'], 'owner_agent_idx'],
    [['tenant_id', 'agent_name'], ['tenant-7', 'agent-7'], 'tenant_agent_idx'],
    [['owner_id', 'tenant_id', 'agent_name'], ['owner-7', 'tenant-7', 'agent-7'], 'owner_tenant_agent_idx'],
  ] as const) {
    it(`listSessions by ${columns.join(' and ')} searches the ${index} index, no scan, no temp sort`, async () => {
      // The statement listSessions builds for these filters and a cursor.
      const where = columns.map((column, i) => `${column} IS ?${i + 1}`).join(' AND ');
      const n = columns.length;
      const text = await plan(
        `SELECT * FROM ${t().sessions} WHERE ${where} AND id > ?${n + 1} ORDER BY id LIMIT ?${n + 2}`,
        ...values,
        's-001000',
        21,
      );
      expect(text).toMatch(new RegExp(`SEARCH ${unquoted()} USING (COVERING )?INDEX ${unquoted()}_${index}`));
      expect(text).not.toMatch(/TEMP B-TREE|^SCAN/);
    });
  }

  it('the retention page searches the activity index', async () => {
    const text = await plan(
      `SELECT id, updated_at FROM ${t().sessions} WHERE updated_at < ?1 AND (updated_at, id) > (?2, ?3)
        ORDER BY updated_at, id LIMIT ?4`,
      '2026-01-01T03:00:00.000Z',
      '',
      '',
      100,
    );
    expect(text).toMatch(new RegExp(`SEARCH ${unquoted()} USING (COVERING )?INDEX ${unquoted()}_idle_idx`));
    expect(text).not.toMatch(/TEMP B-TREE/);
  });

  it('a retention sweep over the 5,000 seeded sessions deletes exactly the idle ones, in bounded batches', async () => {
    const idleBefore = '2026-01-01T00:10:00.000Z'; // updated_at = start + 2n s: n < 300 are idle
    const deleted: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<D1AgentStore['deleteIdleSessions']>> = await store.deleteIdleSessions({
        idleBefore,
        limit: 128,
        cursor,
      });
      expect(page.deleted.length).toBeLessThanOrEqual(128);
      deleted.push(...page.deleted);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(deleted).toHaveLength(299);
    expect(new Set(deleted).size).toBe(299);
    expect((await store.listSessions({ limit: 1 })).sessions[0]?.id).toBe('s-000300');
  }, 60_000);
});
