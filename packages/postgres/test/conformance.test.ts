import { describeAgentStoreConformance } from '@agentstore/conformance';
import { type LaunchedPostgres, launchPostgres } from '@agentstore/conformance/launchers';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { postgresStore } from '../src/index.ts';
import { postgresCapabilities } from './capabilities.ts';
import { freshSchema } from './harness.ts';

// One server (AGENTSTORE_PG_URL, or a throwaway one from the launcher) and one fresh schema for
// the whole kit; every spec gets its own store on a shared pool the stores never end.
const schema = freshSchema('kit');
let server: LaunchedPostgres;
let pool: pg.Pool;

beforeAll(async () => {
  server = await launchPostgres();
  pool = new pg.Pool({ connectionString: server.info.url, max: 10 });
  await postgresStore({ pool }, { schema }).migrate();
});

afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
  await server?.stop();
});

describeAgentStoreConformance({
  name: 'postgres',
  createStore: () => postgresStore({ pool }, { schema }),
  capabilities: postgresCapabilities(() => pool, schema),
});

describeAgentStoreConformance({
  name: 'postgres (no prepared statements)',
  createStore: () => postgresStore({ pool }, { schema, preparedStatements: false }),
  capabilities: postgresCapabilities(() => pool, schema, { preparedStatements: false }),
});
