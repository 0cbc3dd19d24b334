/**
 * One long session's `load`: time and memory around it (heap and RSS deltas next to the size of
 * the result), on a throwaway server (or AGENTSTORE_PG_URL). Not in CI. From packages/postgres:
 *   pnpm run long-load                    # 100,000 messages; LONG_MESSAGES=… to change
 */
import { machineInfo, measureLongLoad } from '@agentstore/bench';
import { launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { postgresStore } from '../src/index.ts';

const server = await launchPostgres();
const pool = new pg.Pool({ connectionString: server.info.url, max: 2 });
const store = postgresStore({ pool }, { schema: `long_${Date.now().toString(36)}` });
try {
  await store.migrate();
  await measureLongLoad('Postgres', store, machineInfo());
} finally {
  await store.close();
  await pool.end();
  await server.stop();
}
