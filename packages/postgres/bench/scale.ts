/**
 * Postgres at size: listing with each filter, retention, append and load, with the plans, on a
 * data set generated in SQL on a throwaway server (or AGENTSTORE_PG_URL), next to the same figures
 * at 1/100th of the size. Not in CI. From packages/postgres:
 *   pnpm run scale                         # 10,000 sessions × 100 messages + one 50,000-message session
 *   SCALE_SESSIONS=1000 pnpm run scale     # smaller full size; the reduced run is always 1/100th
 * Prints a markdown table: median (p10–p90) ms over SCALE_SAMPLES calls, and the plan of each read.
 */
import { machineInfo, printScaleReport, sweepIdleSessions, timeOperation } from '@agentstore/bench';
import { launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { postgresStore } from '../src/index.ts';
import { tableNames } from '../src/schema.ts';
import { buildStatements } from '../src/statements.ts';

const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 10_000);
const PER_SESSION = Number(process.env.SCALE_MESSAGES_PER_SESSION ?? 100);
const LONG = Number(process.env.SCALE_LONG_SESSION ?? 50_000);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 30);

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Temp Written Blocks'?: number;
  Plans?: PlanNode[];
}
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

async function run(pool: pg.Pool, sessions: number, perSession: number, long: number) {
  const schema = `scale_${sessions}_${Date.now().toString(36)}`;
  const store = postgresStore({ pool }, { schema });
  await store.migrate();
  const n = tableNames(schema, 'agentstore_');
  const sql = buildStatements(n);
  const iso = (expr: string) =>
    `to_char(timestamp '2026-01-01' + (${expr}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const body = (content: string) =>
    `'{"id":"m' || g || '","role":"user","content":"${content}","createdAt":"2026-01-01T00:00:00.000Z"}'`;
  const seedStart = performance.now();
  // 1 owner per 10 sessions, 50 tenants, 20 agents; session 1 is the long one; the first 10% of
  // sessions were last active on day 1 (idle), the rest on day 30.
  await pool.query(`
INSERT INTO ${n.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
SELECT 's-' || lpad(s::text, 8, '0'), 'agent-' || (s % 20), 'owner-' || (s % ${Math.max(1, sessions / 10)}),
  'tenant-' || (s % 50), '{}', CASE WHEN s = 1 THEN ${long} ELSE ${perSession} END, ${iso('s')},
  ${iso(`CASE WHEN s <= ${sessions / 10} AND s > 1 THEN 86400 ELSE 30 * 86400 END + s`)}
FROM generate_series(1, ${sessions}) AS s;
INSERT INTO ${n.messages} (session_id, seq, body)
SELECT 's-00000001', g, ${body('x'.repeat(200))} FROM generate_series(1, ${long}) AS g;
INSERT INTO ${n.messages} (session_id, seq, body)
SELECT 's-' || lpad(s::text, 8, '0'), g, ${body('x'.repeat(200))}
FROM generate_series(2, ${sessions}) AS s, generate_series(1, ${perSession}) AS g;`);
  await pool.query(`VACUUM ANALYZE ${n.sessions}`);
  await pool.query(`VACUUM ANALYZE ${n.messages}`);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const messages = (sessions - 1) * perSession + long;

  const explain = async (text: string, values: unknown[]) => {
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
    const nodes = nodesOf((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
    const scans = nodes
      .filter((x) => /Scan/.test(x['Node Type']))
      .map(
        (x) => `${x['Node Type']}${x['Index Name'] ? ` ${x['Index Name'].replace('agentstore_', '')}` : ''}`,
      );
    // Rows a scan produced plus rows it read and dropped; a bitmap's index half is not counted twice.
    const read = nodes
      .filter((x) => /Scan/.test(x['Node Type']) && x['Node Type'] !== 'Bitmap Index Scan')
      .reduce(
        (sum, x) =>
          sum + (x['Actual Rows'] ?? 0) * (x['Actual Loops'] ?? 1) + (x['Rows Removed by Filter'] ?? 0),
        0,
      );
    const temp = nodes.reduce((sum, x) => sum + (x['Temp Written Blocks'] ?? 0), 0);
    const sorts = nodes.filter((x) => x['Node Type'] === 'Sort').length;
    return `${scans.join(' + ')}; rows read ${read}${sorts ? `; ${sorts} sort` : ''}${temp ? `; temp ${temp} blocks` : ''}`;
  };

  const rows: [string, string, string][] = [];
  const listCase = async (what: string, filter: Record<string, string>) => {
    const page = sql.list({ limit: 50, ...filter });
    rows.push([
      `listSessions ${what} (50)`,
      await timeOperation(SAMPLES, () => store.listSessions({ ...filter, limit: 50 })),
      await explain(page.text, page.values),
    ]);
  };
  await listCase('no filter', {});
  await listCase('by owner', { ownerId: 'owner-7' });
  await listCase('by tenant', { tenantId: 'tenant-7' });
  await listCase('by agent', { agentName: 'agent-7' });
  await listCase('by absent owner', { ownerId: 'nobody' });
  await listCase('by tenant + agent', { tenantId: 'tenant-7', agentName: 'agent-7' });
  rows.push([
    `load, ${perSession} messages`,
    await timeOperation(SAMPLES, () => store.load('s-00000500')),
    await explain(sql.load, ['s-00000500', 0]),
  ]);
  rows.push([
    `load, ${long} messages`,
    await timeOperation(Math.max(5, SAMPLES / 6), () => store.load('s-00000001')),
    await explain(sql.load, ['s-00000001', 0]),
  ]);
  let head = perSession;
  const appendId = `s-${String(Math.floor(sessions / 2)).padStart(8, '0')}`;
  rows.push([
    'append 1 message at the head',
    await timeOperation(SAMPLES, async () => {
      await store.append(appendId, {
        expectedSeq: head,
        messages: [
          { id: `a${head}`, role: 'user', content: 'x'.repeat(200), createdAt: new Date().toISOString() },
        ],
        lease: null,
      });
      head += 1;
    }),
    'one statement (guarded UPDATE + INSERT)',
  ]);
  const cutoff = '2026-01-15T00:00:00.000Z';
  const retentionPlan = await pool.query(`EXPLAIN (FORMAT JSON) ${sql.deleteIdle}`, [
    cutoff,
    500,
    '',
    '',
    new Date().toISOString(),
  ]);
  const retentionScans = nodesOf((retentionPlan.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan)
    .filter((x) => /Scan/.test(x['Node Type']) && x['Index Name'])
    .map((x) => x['Index Name']!.replace('agentstore_', ''));
  const sweep = async () => {
    const result = await sweepIdleSessions(store, cutoff, 500);
    const time = `${result.seconds.toFixed(2)} s total; per batch ${result.batchMs.median.toFixed(1)} ms median, ${result.batchMs.max.toFixed(1)} max`;
    return { ...result, time };
  };
  // Every seeded session was created before the cutoff, so the first sweep also moves the active
  // ones' index key up to their last append; a second sweep with the same cutoff finds none.
  const first = await sweep();
  rows.push([
    `retention, first sweep: ${first.deleted} idle sessions (${first.deleted * perSession} messages) deleted, the other ${sessions - first.deleted} re-keyed; batches of 500`,
    first.time,
    `${first.batches} statements; index scans ${[...new Set(retentionScans)].join(', ')}`,
  ]);
  const second = await sweep();
  rows.push([
    `retention, second sweep, same cutoff: ${second.deleted} deleted`,
    second.time,
    `${second.batches} statement`,
  ]);
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  return {
    label: `${sessions.toLocaleString('en')} sessions, ${messages.toLocaleString('en')} messages (seeded in ${seedSeconds.toFixed(0)} s)`,
    rows,
  };
}

const server = await launchPostgres();
const pool = new pg.Pool({ connectionString: server.info.url, max: 4 });
try {
  const atStart = machineInfo();
  const { rows: version } = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  const results = [];
  for (const [sessions, perSession, long] of [
    [Math.max(10, SESSIONS / 100), PER_SESSION, Math.max(10, LONG / 100)],
    [SESSIONS, PER_SESSION, LONG],
  ] as const) {
    results.push(await run(pool, sessions, perSession, long));
  }
  printScaleReport(
    `Postgres ${version[0]!.v} at size`,
    SAMPLES,
    ['operation', 'ms', 'plan'],
    results,
    atStart,
  );
} finally {
  await pool.end();
  await server.stop();
}
