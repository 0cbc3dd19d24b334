import type { OpenTestTarget } from '@agentstore/core/testing';
import pg from 'pg';
import { postgresStore } from '../postgres-store.ts';
import { postgresCapabilities } from './capabilities.ts';

export { postgresCapabilities } from './capabilities.ts';

/**
 * The Postgres store under test in a fresh schema (dropped on close by the target that made it) on the server at
 * `connectionString`, with capabilities written as plain SQL through pg on a shared pool.
 */
export async function postgresTestTarget(options: {
  connectionString: string;
  /** Reuse this schema (e.g. another process's); default a fresh one. */
  schema?: string;
  preparedStatements?: boolean;
  name?: string;
}): Promise<OpenTestTarget> {
  const schema = options.schema ?? `agentstore_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const ownsSchema = options.schema === undefined;
  const preparedStatements = options.preparedStatements ?? true;
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 10 });
  pool.on('error', () => {}); // an idle client dropped by a server restart must not crash the process
  // Every query of the pool (the stores' and the floor's) is one round trip: the perf gate's counter.
  let roundTrips = 0;
  pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      roundTrips += 1;
      return query(...args);
    };
  });
  await postgresStore({ pool }, { schema }).migrate();
  return {
    name: options.name ?? (preparedStatements ? 'postgres' : 'postgres (no prepared statements)'),
    reopen: { connectionString: options.connectionString, schema, preparedStatements },
    createStore: () => postgresStore({ pool }, { schema, preparedStatements }),
    capabilities: {
      ...postgresCapabilities(() => pool, schema, { preparedStatements }),
      roundTrips: () => roundTrips,
    },
    async describe() {
      const { rows } = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      return `PostgreSQL ${rows[0]?.v ?? 'unknown'} (pg), schema ${schema}`;
    },
    async close() {
      if (ownsSchema) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
