import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, roundTripCounters, targetOnServer } from '@agentstore/core/testing';
import pg from 'pg';
import { postgresStore } from '../postgres-store.ts';
import { postgresCapabilities } from './capabilities.ts';
import { importServers } from './import-servers.ts';

export { postgresCapabilities } from './capabilities.ts';

/** A pool whose every `client.query` (one round trip each) calls `tick`: pool queries and transactions both end there. */
function countedPool(connectionString: string, max: number, tick: () => void): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('error', () => {}); // an idle client dropped by a server restart must not crash the process
  pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      tick();
      return query(...args);
    };
  });
  return pool;
}

export interface PostgresTargetOptions {
  connectionString: string;
  /** Reuse this schema (e.g. another process's); default a fresh one. */
  schema?: string;
  preparedStatements?: boolean;
  name?: string;
}

/**
 * The Postgres store under test in a fresh schema (dropped on close by the target that made it) on
 * the server at `connectionString`, with capabilities written as plain SQL through pg. Every store
 * it creates has a pool of its own whose queries are counted (`roundTrips`).
 */
export async function postgresTestTarget(options: PostgresTargetOptions): Promise<OpenTestTarget> {
  const schema = options.schema ?? `agentstore_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const ownsSchema = options.schema === undefined;
  const preparedStatements = options.preparedStatements ?? true;
  const counters = roundTripCounters();
  let tickFloor = () => {};
  const pool = countedPool(options.connectionString, 10, () => tickFloor());
  await postgresStore({ pool }, { schema }).migrate();
  const capabilities = postgresCapabilities(() => pool, schema, { preparedStatements });
  if (capabilities.floor) tickFloor = counters.track(capabilities.floor);
  return {
    name: options.name ?? (preparedStatements ? 'postgres' : 'postgres (no prepared statements)'),
    module: import.meta.url,
    reopen: { connectionString: options.connectionString, schema, preparedStatements },
    createStore: () => {
      let tick = () => {};
      const own = countedPool(options.connectionString, 10, () => tick());
      const store = postgresStore({ pool: own }, { schema, preparedStatements });
      const counted: AgentStore = {
        ...store,
        async close() {
          await store.close();
          await own.end();
        },
      };
      tick = counters.track(counted);
      return counted;
    },
    capabilities,
    roundTrips: counters.count,
    roundTripUnit: 'pg queries (each query is one round trip)',
    async durabilitySettings() {
      const names = ['fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes', 'data_directory'];
      const { rows } = await pool.query<{ name: string; setting: string }>(
        'SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])',
        [names],
      );
      const found = Object.fromEntries(rows.map((row) => [row.name, row.setting]));
      const { data_directory: dataDir, ...settings } = found;
      // The data directory is readable by superusers only; without it the file system is not reported.
      return { settings, ...(dataDir ? { dataDir } : {}) };
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

/**
 * What the kit and the tools open: with a target's `reopen`, the same schema from another
 * process; without, a throwaway server from `@agentstore/servers` (or the one
 * `AGENTSTORE_PG_URL` names) and a fresh schema, both gone on close.
 */
export default async function openPostgresTarget(
  options?: Partial<PostgresTargetOptions>,
): Promise<OpenTestTarget> {
  if (options?.connectionString) return postgresTestTarget(options as PostgresTargetOptions);
  // A server of the user's own needs no launcher: @agentstore/servers is an optional peer.
  const url = process.env.AGENTSTORE_PG_URL;
  if (url) return postgresTestTarget({ ...options, connectionString: url });
  const { launchPostgres } = await importServers('@agentstore/postgres', 'AGENTSTORE_PG_URL', 'a Postgres');
  return targetOnServer(
    () => launchPostgres(),
    (server) => postgresTestTarget({ ...options, connectionString: server.info.url }),
  );
}
