import type { OpenTestTarget } from '@agentstore/core/testing';
import pg from 'pg';
import { postgresStore } from '../postgres-store.ts';
import { postgresCapabilities } from './capabilities.ts';

export { postgresCapabilities } from './capabilities.ts';

/**
 * The Postgres store under test in a fresh schema (dropped on close) on the server at
 * `connectionString`, with capabilities written as plain SQL through pg on a shared pool.
 */
export async function postgresTestTarget(options: {
  connectionString: string;
  preparedStatements?: boolean;
  name?: string;
}): Promise<OpenTestTarget> {
  const schema = `agentstore_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const preparedStatements = options.preparedStatements ?? true;
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 10 });
  await postgresStore({ pool }, { schema }).migrate();
  return {
    name: options.name ?? (preparedStatements ? 'postgres' : 'postgres (no prepared statements)'),
    createStore: () => postgresStore({ pool }, { schema, preparedStatements }),
    capabilities: postgresCapabilities(() => pool, schema, { preparedStatements }),
    async describe() {
      const { rows } = await pool.query<{ v: string }>('SHOW server_version');
      return `PostgreSQL ${rows[0]?.v ?? 'unknown'} (pg), schema ${schema}`;
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
