import {
  SQLITE_SCHEMA_VERSION,
  sqliteMigrationPlan,
  sqliteSelectVersionSql,
  sqliteTableNames,
  sqliteVersionTableSql,
} from '@agentstore/sqlite-dialect';
import type { Database } from 'better-sqlite3';

/**
 * Creates or upgrades the store's tables. Idempotent and safe to run from several processes at
 * once (one IMMEDIATE transaction). `sqliteStore` runs it on first use. A schema newer than this
 * package is a `SchemaVersionError` (code `SCHEMA_VERSION_UNSUPPORTED`).
 */
export function migrate(database: Database, options: { tablePrefix?: string } = {}): { version: number } {
  const t = sqliteTableNames(options.tablePrefix);
  const run = database.transaction(() => {
    database.prepare(sqliteVersionTableSql(t)).run();
    const row = database.prepare(sqliteSelectVersionSql(t)).get() as { version: number } | undefined;
    // A table that already has the column (made by a newer `schemaStatements()` under an older
    // recorded version, say) skips the ADD COLUMN, which has no IF NOT EXISTS in SQLite.
    const columns = database.prepare(`SELECT name FROM pragma_table_info(?)`).all(`${t.prefix}sessions`) as {
      name: string;
    }[];
    const hasIncarnation = columns.some((c) => c.name === 'incarnation_id');
    for (const statement of sqliteMigrationPlan(t, row?.version ?? 0)) {
      if (hasIncarnation && /ADD COLUMN incarnation_id/.test(statement)) continue;
      database.prepare(statement).run();
    }
  });
  run.immediate();
  return { version: SQLITE_SCHEMA_VERSION };
}
