import {
  SQLITE_DEFAULT_TABLE_PREFIX,
  SQLITE_SCHEMA_VERSION,
  type SqliteTableNames,
  sqliteMigrationPlan,
  sqliteSchemaStatements,
  sqliteSelectVersionSql,
  sqliteTableNames,
  sqliteVersionTableSql,
} from '@agentstore/core/store';
import type { D1DatabaseLike } from './d1-binding.ts';

// The schema is core's SQLite dialect, shared with @agentstore/sqlite.
export { SchemaVersionError } from '@agentstore/core/store';
export const DEFAULT_TABLE_PREFIX = SQLITE_DEFAULT_TABLE_PREFIX;
/** The schema version this package writes; `migrate()` records it in `<prefix>schema_version`. */
export const SCHEMA_VERSION = SQLITE_SCHEMA_VERSION;
export type TableNames = SqliteTableNames;
export const tableNames = sqliteTableNames;

/**
 * The whole schema as separate statements, for teams that apply schema with
 * `wrangler d1 migrations` instead: write them into a migration file (each followed by `;`).
 * The last one records the version, so `store.migrate()` afterwards finds nothing to do.
 */
export const schemaStatements = sqliteSchemaStatements;

/**
 * Creates the tables when missing and records the schema version. Idempotent and safe to run
 * from several workers at once: every statement is `IF NOT EXISTS` or an upsert, and the
 * version-1 statements run in one batch (one transaction).
 */
export async function migrateSchema(db: D1DatabaseLike, t: TableNames): Promise<{ version: number }> {
  await db.prepare(sqliteVersionTableSql(t)).all();
  const { results } = await db.prepare(sqliteSelectVersionSql(t)).all<{ version: number }>();
  const plan = sqliteMigrationPlan(t, results[0]?.version ?? 0);
  if (plan.length > 0) await db.batch(plan.map((sql) => db.prepare(sql)));
  return { version: SCHEMA_VERSION };
}
