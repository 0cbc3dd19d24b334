import type { AgentStore } from '@agentstore/core';
import type { StoreCapabilities } from '@agentstore/core/testing';
import type { Pool, PoolClient } from 'pg';
import { importAdapterEntry } from './adapter-import.ts';
import type { CountedBackend } from './types.ts';

interface PostgresAdapter {
  postgresStore(target: { pool: Pool }, options: { schema: string; preparedStatements: boolean }): AgentStore;
}
interface PostgresTesting {
  postgresCapabilities(
    getPool: () => Pool,
    schema: string,
    options: { preparedStatements: boolean },
  ): StoreCapabilities;
}

/** A pg pool of our own on the target's schema; every `client.query` (one round trip each) counted. */
export async function countedPostgres(reopen: Record<string, string | boolean>): Promise<CountedBackend> {
  const { connectionString, schema } = reopen;
  if (typeof connectionString !== 'string' || typeof schema !== 'string') {
    throw new Error('the postgres target does not say how to reopen it (connectionString, schema)');
  }
  const preparedStatements = reopen.preparedStatements !== false;
  const { module: adapter, requireFromAdapter } =
    await importAdapterEntry<PostgresAdapter>('@agentstore/postgres');
  const { module: testing } = await importAdapterEntry<PostgresTesting>('@agentstore/postgres/testing');
  const pg = requireFromAdapter('pg') as typeof import('pg');
  const pool = new pg.Pool({ connectionString, max: 2 });
  pool.on('error', () => {});
  let queries = 0;
  // Pool queries and transactions both end in a pooled client's `query`.
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      queries += 1;
      return query(...args);
    };
  });
  const store = adapter.postgresStore({ pool }, { schema, preparedStatements });
  return {
    method: 'driver',
    unit: 'pg queries (each query is one round trip)',
    store,
    floor: testing.postgresCapabilities(() => pool, schema, { preparedStatements }).floor ?? null,
    count: () => queries,
    async close() {
      await store.close();
      await pool.end();
    },
  };
}
