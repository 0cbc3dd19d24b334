import {
  SQLITE_SCHEMA_VERSION,
  type SqliteTableNames,
  sqliteMigrationPlan,
  sqliteSchemaStatements,
  sqliteSelectVersionSql,
  sqliteTableNames,
  sqliteVersionTableSql,
} from '@agentstore/core/store';
import type { Database } from 'better-sqlite3';

/** The schema version this package writes and reads (core's SQLite dialect, shared with D1). */
export const SCHEMA_VERSION = SQLITE_SCHEMA_VERSION;
export type TableNames = SqliteTableNames;
export const tableNames = sqliteTableNames;

/**
 * The DDL of the current schema version, one statement per entry, for users who run their own
 * migration tooling. Every statement is idempotent, so `migrate()` stays harmless after it.
 */
export const schemaStatements = sqliteSchemaStatements;

/**
 * Creates or upgrades the store's tables. Idempotent and safe to run from several processes at
 * once (one IMMEDIATE transaction). `sqliteStore` runs it on first use. A schema newer than this
 * package is a `SchemaVersionError` (code `SCHEMA_VERSION_UNSUPPORTED`).
 */
export function migrate(database: Database, options: { tablePrefix?: string } = {}): { version: number } {
  const t = tableNames(options.tablePrefix);
  const run = database.transaction(() => {
    database.prepare(sqliteVersionTableSql(t)).run();
    const row = database.prepare(sqliteSelectVersionSql(t)).get() as { version: number } | undefined;
    for (const statement of sqliteMigrationPlan(t, row?.version ?? 0)) database.prepare(statement).run();
  });
  run.immediate();
  return { version: SCHEMA_VERSION };
}
