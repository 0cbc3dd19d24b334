import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableNames } from '../src/schema.ts';
import { buildStatements } from '../src/statements.ts';
import { usePostgres } from './harness.ts';

/*
 * The plans behind listing, retention and load on a table big enough that a missing index would
 * show: 20,000 sessions (2,000 owners, 50 tenants, 10 agents) and 150,000 messages, one session
 * holding 50,000 of them. Each statement must be an index scan with no Seq Scan and no Sort, with
 * the values bound (custom plan) and as the generic plan a prepared statement ends up with.
 */
const server = usePostgres('plans');
const SESSIONS = 20_000;
const LONG = 50_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Temp Written Blocks'?: number;
  Filter?: string;
  'One-Time Filter'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

const literal = (value: unknown) =>
  typeof value === 'number' ? String(value) : pg.Client.prototype.escapeLiteral(String(value));

describe('Postgres plans at size', () => {
  let sql: ReturnType<typeof buildStatements>;
  let names: ReturnType<typeof tableNames>;

  beforeAll(async () => {
    await server.store();
    names = tableNames(server.schema, 'agentstore_');
    sql = buildStatements(names);
    const iso = (expr: string) =>
      `to_char(timestamp '2026-01-01' + (${expr}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    await server.pool.query(`
INSERT INTO ${names.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
SELECT 's-' || lpad(g::text, 6, '0'), 'agent-' || (g % 10), 'owner-' || (g % 2000), 'tenant-' || (g % 50),
  '{}', CASE WHEN g = 1 THEN ${LONG} ELSE 5 END, ${iso('g')}, ${iso('g * 2')}
FROM generate_series(1, ${SESSIONS}) AS g;
INSERT INTO ${names.messages} (session_id, seq, body)
SELECT 's-000001', g, '{"id":"m' || g || '","role":"user","content":"' || repeat('x', 300) || '","createdAt":"2026-01-01T00:00:00.000Z"}'
FROM generate_series(1, ${LONG}) AS g;
INSERT INTO ${names.messages} (session_id, seq, body)
SELECT 's-' || lpad(s::text, 6, '0'), g, '{"id":"m' || g || '","role":"user","content":"short","createdAt":"2026-01-01T00:00:00.000Z"}'
FROM generate_series(2, ${SESSIONS}) AS s, generate_series(1, 5) AS g;
ANALYZE ${names.sessions}; ANALYZE ${names.messages};`);
  }, 300_000);

  /** The plan as bound values get it (custom) and as a prepared statement's generic plan. */
  async function plans(text: string, values: unknown[], analyze = false): Promise<PlanNode[][]> {
    const client = await server.pool.connect();
    try {
      const found: PlanNode[][] = [];
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        await client.query(`PREPARE plan_under_test AS ${text}`);
        try {
          const options = analyze ? 'ANALYZE, BUFFERS, FORMAT JSON' : 'FORMAT JSON';
          const { rows } = await client.query(
            `EXPLAIN (${options}) EXECUTE plan_under_test(${values.map(literal).join(', ')})`,
          );
          found.push(nodesOf((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan));
        } finally {
          await client.query('DEALLOCATE plan_under_test');
          await client.query('RESET plan_cache_mode');
        }
      }
      return found;
    } finally {
      client.release();
    }
  }

  /*
   * An append decides grant or refusal once, before any message row is made: the decision is a
   * scalar subquery (an InitPlan) under a one-time filter. Written straight into WHERE, the call
   * of the VOLATILE refusal function made it a per-row filter on the messages in the `many`
   * shape (an attack found it with EXPLAIN): an empty array would then have skipped the refusal.
   */
  it('every append statement decides once, in a one-time filter, and never calls the refusal per row', async () => {
    for (const [statements, first] of [
      [sql.append, false],
      [sql.appendFirst, true],
    ] as const) {
      for (const shape of ['one', 'many'] as const) {
        const body = shape === 'one' ? '{"id":"a"}' : '[{"id":"a"},{"id":"b"}]';
        const values = ['s-000002', 5, 'holder', 1, '{}', 'false', body, 2];
        if (first) values.push('agent', 'owner', 'tenant', 'null', 'incarnation');
        for (const nodes of await plans(statements[shape], values)) {
          const shapeText = JSON.stringify(
            nodes.map((n) => [n['Node Type'], n.Filter, n['One-Time Filter']]),
          );
          expect(
            nodes.some((n) => /IS NOT NULL/.test(n['One-Time Filter'] ?? '')),
            shapeText,
          ).toBe(true);
          expect(
            nodes.filter((n) => (n.Filter ?? '').includes('refuse_append')),
            shapeText,
          ).toEqual([]);
        }
      }
    }
  });

  /**
   * The plan reads one of `indexes` (a filter's own index, or a combined one that leads with the
   * same column), never the table, and sorts only what a bitmap scan of that index returned: the
   * filter's own entries, which the planner prefers to an ordered scan only when they are few.
   */
  function expectIndexOnly(nodes: PlanNode[], indexes: string[]) {
    const shape = JSON.stringify(nodes.map((n) => [n['Node Type'], n['Index Name']]));
    const types = nodes.map((n) => n['Node Type']);
    expect(types, shape).not.toContain('Seq Scan');
    const used = nodes.filter((n) => indexes.includes(n['Index Name'] ?? ''));
    expect(used.length, shape).toBeGreaterThan(0);
    if (types.includes('Sort')) {
      expect(
        used.some((n) => n['Node Type'] === 'Bitmap Index Scan'),
        shape,
      ).toBe(true);
    }
  }

  // A single filter may be served by its own index or by a combined one leading with its column.
  const leadingWith: Record<string, string[]> = {
    agentstore_sessions_owner_idx: ['owner_tenant', 'owner_agent', 'owner_tenant_agent'],
    agentstore_sessions_tenant_idx: ['tenant_agent'],
  };
  const servingIndexes = (index: string) => [
    index,
    ...(leadingWith[index] ?? []).map((name) => `agentstore_sessions_${name}_idx`),
  ];

  const cases: [
    string,
    { ownerId?: string; tenantId?: string; agentName?: string; cursor?: string },
    string,
  ][] = [
    ['no filter', {}, 'agentstore_sessions_pkey'],
    ['owner', { ownerId: 'owner-7' }, 'agentstore_sessions_owner_idx'],
    ['absent owner', { ownerId: 'nobody' }, 'agentstore_sessions_owner_idx'],
    ['absent tenant', { tenantId: 'nobody' }, 'agentstore_sessions_tenant_idx'],
    ['absent agent', { agentName: 'nobody' }, 'agentstore_sessions_agent_idx'],
    ['tenant', { tenantId: 'tenant-7' }, 'agentstore_sessions_tenant_idx'],
    ['agent name', { agentName: 'agent-7' }, 'agentstore_sessions_agent_idx'],
    [
      'agent name after a cursor',
      { agentName: 'agent-7', cursor: 's-010000' },
      'agentstore_sessions_agent_idx',
    ],
  ];
  for (const [what, filters, index] of cases) {
    it(`listSessions by ${what} is an index scan of ${index} (or a combined index leading with its column), no seq scan, no sort beyond its own entries`, async () => {
      const page = sql.list({ limit: 20, ...filters });
      for (const nodes of await plans(page.text, page.values)) expectIndexOnly(nodes, servingIndexes(index));
    });
  }

  const combined: [string, { ownerId?: string; tenantId?: string; agentName?: string }, string][] = [
    ['owner and tenant', { ownerId: 'owner-7', tenantId: 'tenant-7' }, 'owner_tenant'],
    ['owner and agent', { ownerId: 'owner-7', agentName: 'agent-7' }, 'owner_agent'],
    ['tenant and agent', { tenantId: 'tenant-7', agentName: 'agent-7' }, 'tenant_agent'],
    ['tenant and agent, matching nothing', { tenantId: 'tenant-7', agentName: 'agent-8' }, 'tenant_agent'],
    [
      'owner, tenant and agent',
      { ownerId: 'owner-7', tenantId: 'tenant-7', agentName: 'agent-7' },
      'owner_tenant_agent',
    ],
  ];
  for (const [what, filters, name] of combined) {
    for (const cursor of [undefined, 's-010000']) {
      it(`listSessions by ${what}${cursor ? ' after a cursor' : ''} reads the ${name} index: no seq scan, no sort beyond its own entries`, async () => {
        const page = sql.list({ limit: 20, ...filters, ...(cursor ? { cursor } : {}) });
        for (const nodes of await plans(page.text, page.values)) {
          expectIndexOnly(nodes, [`agentstore_sessions_${name}_idx`]);
        }
      });
    }
  }

  it('deleteIdleSessions reads its candidates from the activity index', async () => {
    const values = ['2026-01-01T01:00:00.000Z', 100, '', ''];
    const client = await server.pool.connect();
    try {
      // EXPLAIN only (no ANALYZE): the statement deletes.
      for (const nodes of await plans(sql.deleteIdle, values)) {
        expect(nodes.map((n) => n['Index Name'])).toContain('agentstore_sessions_idle_idx');
        const sessionScans = nodes.filter(
          (n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'agentstore_sessions',
        );
        expect(sessionScans).toEqual([]);
        expect(
          nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'agentstore_messages'),
        ).toEqual([]);
      }
    } finally {
      client.release();
    }
  });

  it('load is one pass: no sort and nothing written to temp for a 50,000-message session; an index lookup for a short one', async () => {
    // The long session is a third of this table, so a scan of it is the planner's fair choice;
    // what must never appear is a sort (spilling to disk at this size).
    for (const nodes of await plans(sql.load, ['s-000001', 0], true)) {
      const shape = JSON.stringify(nodes.map((n) => [n['Node Type'], n['Index Name']]));
      expect(
        nodes.map((n) => n['Node Type']),
        shape,
      ).not.toContain('Sort');
      expect(
        nodes.reduce((sum, n) => sum + (n['Temp Written Blocks'] ?? 0), 0),
        shape,
      ).toBe(0);
    }
    for (const nodes of await plans(sql.load, ['s-000002', 0], true)) {
      const shape = JSON.stringify(nodes.map((n) => [n['Node Type'], n['Index Name']]));
      expect(
        nodes.map((n) => n['Node Type']),
        shape,
      ).not.toContain('Sort');
      expect(
        nodes.map((n) => n['Node Type']),
        shape,
      ).not.toContain('Seq Scan');
      expect(
        nodes.map((n) => n['Index Name']),
        shape,
      ).toContain('agentstore_messages_pkey');
    }
    const store = await server.store();
    const loaded = await store.load('s-000001');
    expect(loaded?.messages).toHaveLength(LONG);
    expect(loaded?.messages.every((m, i) => m.seq === i + 1 && m.id === `m${i + 1}`)).toBe(true);
    const tail = await store.load('s-000001', { afterSeq: LONG - 3 });
    expect(tail?.messages.map((m) => m.seq)).toEqual([LONG - 2, LONG - 1, LONG]);
  }, 120_000);
});
