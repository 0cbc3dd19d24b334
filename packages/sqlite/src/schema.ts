import { InvalidArgumentError, SchemaMissingError, SchemaVersionError } from '@agentstore/core';
import {
  SQLITE_DEFAULT_TABLE_PREFIX,
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
 * package is a `SchemaVersionError` (code `SCHEMA_VERSION_UNSUPPORTED`). On a read-only
 * connection it writes nothing: the current schema must already be there (`requireSchema`).
 */
export function migrate(database: Database, options: { tablePrefix?: string } = {}): { version: number } {
  // Up to date (the usual case): no write transaction, so a read-only connection works too.
  if (readSchemaVersion(database, options.tablePrefix) === SQLITE_SCHEMA_VERSION) {
    return { version: SQLITE_SCHEMA_VERSION };
  }
  if (database.readonly) return requireSchema(database, options);
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

/** The schema version recorded in the file, or null when it holds no agentstore tables (with this prefix). */
export function readSchemaVersion(
  database: Database,
  tablePrefix = SQLITE_DEFAULT_TABLE_PREFIX,
): number | null {
  const table = database
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(`${tablePrefix}schema_version`);
  if (table === undefined) return null;
  const row = database.prepare(sqliteSelectVersionSql(sqliteTableNames(tablePrefix))).get() as
    | { version: number }
    | undefined;
  return row?.version ?? null;
}

/**
 * Refuses a database that does not already hold this package's schema, without writing: a file
 * with no agentstore tables (another application's database, a wrong path or prefix) is a
 * `SchemaMissingError`, a newer schema a `SchemaVersionError`, an older one a `SchemaMissingError`
 * that says to open it writable once (which upgrades it).
 */
export function requireSchema(
  database: Database,
  options: { tablePrefix?: string; path?: string } = {},
): { version: number } {
  const prefix = options.tablePrefix ?? SQLITE_DEFAULT_TABLE_PREFIX;
  const where = options.path ?? database.name;
  const found = readSchemaVersion(database, prefix);
  if (found === SQLITE_SCHEMA_VERSION) return { version: found };
  if (found !== null && found > SQLITE_SCHEMA_VERSION)
    throw new SchemaVersionError(found, SQLITE_SCHEMA_VERSION);
  if (found === null) {
    const others = (
      database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%schema_version'")
        .all() as { name: string }[]
    ).map((row) => row.name.slice(0, -'schema_version'.length));
    throw new SchemaMissingError({
      store: '@agentstore/sqlite',
      missing: `agentstore's tables (prefix ${prefix}) in ${where}`,
      fix:
        others.length > 0
          ? `this file holds agentstore tables with prefix ${others.join(', ')}: pass that tablePrefix`
          : 'check the path: this file is not an agentstore database (opening it writable with sqliteStore() would create the tables)',
    });
  }
  throw new SchemaMissingError({
    store: '@agentstore/sqlite',
    missing: `schema version ${SQLITE_SCHEMA_VERSION} (the file has version ${found}) in ${where}`,
    fix: 'open it once with a writable sqliteStore(), which upgrades it in place',
  });
}

/** A `SqliteError` that says the file is not a database, as a typed error naming the path. */
export function notADatabase(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'SQLITE_NOTADB') return error;
  return new InvalidArgumentError({ argument: 'path', reason: `${path} is not a SQLite database` });
}
