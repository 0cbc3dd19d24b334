import { InvalidArgumentError } from '@agentstore/core';
import type { Pool } from 'pg';
import { checkout } from './checkout.ts';
import {
  LATEST_VERSION,
  MIGRATIONS,
  migrationsTableSql,
  recordMigrationSql,
  schemaSql,
  type TableNames,
} from './schema.ts';

/** Advisory lock class for agentstore migrations ('agst'); the second key is a hash of the schema. */
const LOCK_CLASS = 0x61677374;

export interface MigrateResult {
  /** Versions applied by this call (empty when the schema was already up to date). */
  applied: number[];
  /** The schema version after this call. */
  version: number;
}

/**
 * Applies the missing migrations in one transaction, under a transaction-scoped advisory lock
 * on the schema, so two processes migrating at once apply each version exactly once.
 */
export async function runMigrations(
  pool: Pool,
  names: TableNames,
  schema: string,
  tablePrefix: string,
): Promise<MigrateResult> {
  const own = await checkout(pool);
  const { client } = own;
  let broken: unknown;
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [
        LOCK_CLASS,
        `agentstore:${schema}`,
      ]);
      // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists.
      const existing = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1::text', [schema]);
      if (existing.rowCount === 0) await client.query(schemaSql(names));
      await client.query(migrationsTableSql(names));
      const done = await client.query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
      const have = new Set(done.rows.map((row) => row.version));
      const newest = Math.max(0, ...have);
      if (newest > LATEST_VERSION) {
        throw new InvalidArgumentError({
          argument: 'schema',
          reason: `is at version ${newest}, newer than this @agentstore/postgres knows (${LATEST_VERSION}); upgrade the package`,
        });
      }
      const applied: number[] = [];
      for (const migration of MIGRATIONS) {
        if (have.has(migration.version)) continue;
        await client.query(migration.sql(names, tablePrefix));
        await client.query(recordMigrationSql(names, migration));
        applied.push(migration.version);
      }
      await client.query('COMMIT');
      return { applied, version: Math.max(0, ...have, ...applied) };
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError;
      });
      throw error;
    }
  } finally {
    // A connection whose rollback failed is destroyed rather than handed back to the pool.
    own.release(broken);
  }
}
