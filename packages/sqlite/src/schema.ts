import { InvalidArgumentError } from '@agentstore/core';
import type { Database } from 'better-sqlite3';
import { DEFAULT_TABLE_PREFIX, validateTablePrefix } from './options.ts';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 2;

/** Quoted table names for one prefix. Only ever built from a validated prefix. */
export interface TableNames {
  sessions: string;
  messages: string;
  schemaVersion: string;
}

export function tableNames(tablePrefix: string = DEFAULT_TABLE_PREFIX): TableNames {
  validateTablePrefix(tablePrefix);
  return {
    sessions: `"${tablePrefix}sessions"`,
    messages: `"${tablePrefix}messages"`,
    schemaVersion: `"${tablePrefix}schema_version"`,
  };
}

/**
 * The DDL of the current schema version, one statement per entry, for users who run their own
 * migration tooling. Every statement is `IF NOT EXISTS`, so `migrate()` stays harmless after it.
 */
export function schemaStatements(options: { tablePrefix?: string } = {}): string[] {
  const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  const t = tableNames(prefix);
  return [
    // A rowid table: `state` can be large, and WITHOUT ROWID rows should stay small.
    `CREATE TABLE IF NOT EXISTS ${t.sessions} (
  id TEXT NOT NULL PRIMARY KEY,
  agent_name TEXT NOT NULL,
  owner_id TEXT,
  tenant_id TEXT,
  state TEXT NOT NULL,
  head_seq INTEGER NOT NULL DEFAULT 0,
  lease_holder TEXT,
  lease_epoch INTEGER NOT NULL DEFAULT 0,
  lease_expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT`,
    `CREATE INDEX IF NOT EXISTS "${prefix}sessions_owner_idx" ON ${t.sessions} (owner_id, id)`,
    `CREATE INDEX IF NOT EXISTS "${prefix}sessions_tenant_idx" ON ${t.sessions} (tenant_id, id)`,
    `CREATE INDEX IF NOT EXISTS "${prefix}sessions_agent_idx" ON ${t.sessions} (agent_name, id)`,
    // Version 2: retention walks sessions by last activity (SQLite has no HOT updates to keep).
    `CREATE INDEX IF NOT EXISTS "${prefix}sessions_idle_idx" ON ${t.sessions} (updated_at, id)`,
    // Clustered by (session_id, seq): an append touches one b-tree and a load reads one range.
    // The primary key is the second guard against a double append at the same seq.
    `CREATE TABLE IF NOT EXISTS ${t.messages} (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  role TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID, STRICT`,
  ];
}

function versionTableStatement(t: TableNames): string {
  return `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (
  singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
  version INTEGER NOT NULL,
  applied_at TEXT NOT NULL
) STRICT`;
}

/**
 * Creates or upgrades the store's tables. Idempotent and safe to run from several processes at
 * once (one IMMEDIATE transaction). `sqliteStore` runs it on first use.
 */
export function migrate(database: Database, options: { tablePrefix?: string } = {}): { version: number } {
  const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  const t = tableNames(prefix);
  const run = database.transaction(() => {
    database.prepare(versionTableStatement(t)).run();
    const row = database.prepare(`SELECT version FROM ${t.schemaVersion} WHERE singleton = 1`).get() as
      | { version: number }
      | undefined;
    const current = row?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new InvalidArgumentError({
        argument: 'database',
        reason: `has agentstore schema version ${current}, newer than this package's ${SCHEMA_VERSION}; upgrade @agentstore/sqlite`,
      });
    }
    if (current === SCHEMA_VERSION) return;
    for (const statement of schemaStatements({ tablePrefix: prefix })) database.prepare(statement).run();
    database
      .prepare(
        `INSERT INTO ${t.schemaVersion} (singleton, version, applied_at) VALUES (1, ?, ?)
         ON CONFLICT (singleton) DO UPDATE SET version = excluded.version, applied_at = excluded.applied_at`,
      )
      .run(SCHEMA_VERSION, new Date().toISOString());
  });
  run.immediate();
  return { version: SCHEMA_VERSION };
}
