import { AgentStoreError, InvalidArgumentError } from '@agentstore/core';
import type { D1DatabaseLike } from './d1-binding.ts';

export const DEFAULT_TABLE_PREFIX = 'agentstore_';

/** The schema version this package writes; `migrate()` records it in `<prefix>schema_version`. */
export const SCHEMA_VERSION = 2;

/**
 * A prefix ends up inside SQL as part of identifiers, so it is held to a strict pattern: a
 * letter, then letters, digits or underscores. `sqlite_` (SQLite) and `_cf_` (D1) are reserved.
 */
const PREFIX_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

export interface TableNames {
  sessions: string;
  messages: string;
  schemaVersion: string;
}

export function tableNames(prefix: string = DEFAULT_TABLE_PREFIX): TableNames {
  if (
    typeof prefix !== 'string' ||
    !PREFIX_PATTERN.test(prefix) ||
    prefix.toLowerCase().startsWith('sqlite_')
  ) {
    throw new InvalidArgumentError({
      argument: 'tablePrefix',
      reason:
        'must be a letter followed by up to 47 letters, digits or underscores, not starting with "sqlite_"',
    });
  }
  return {
    sessions: `${prefix}sessions`,
    messages: `${prefix}messages`,
    schemaVersion: `${prefix}schema_version`,
  };
}

const versionTableSql = (t: TableNames) =>
  `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT`;

const recordVersionSql = (t: TableNames) =>
  `INSERT INTO ${t.schemaVersion} (id, version) VALUES (1, ${SCHEMA_VERSION})
  ON CONFLICT (id) DO UPDATE SET version = max(version, excluded.version)`;

/**
 * Version 1, one statement per string (D1 prepares one statement at a time). STRICT makes
 * SQLite reject a value of the wrong type instead of storing it. Messages keep a rowid (their
 * bodies can be large, which WITHOUT ROWID tables handle poorly); `PRIMARY KEY (session_id,
 * seq)` is the backstop that makes a second writer of one seq fail even if a guard were wrong.
 * The (owner|tenant|agent, id) indexes serve `listSessions` filters (their columns never change
 * after a session is created); version 2 adds (updated_at, id) for `deleteIdleSessions`. An
 * upgrade from version 1 runs the same IF NOT EXISTS statements, so it only adds that index.
 */
function schemaV1(t: TableNames): string[] {
  return [
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
    `CREATE TABLE IF NOT EXISTS ${t.messages} (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT`,
    `CREATE INDEX IF NOT EXISTS ${t.sessions}_by_owner ON ${t.sessions} (owner_id, id)`,
    `CREATE INDEX IF NOT EXISTS ${t.sessions}_by_tenant ON ${t.sessions} (tenant_id, id)`,
    `CREATE INDEX IF NOT EXISTS ${t.sessions}_by_agent ON ${t.sessions} (agent_name, id)`,
    // Version 2: retention walks sessions by last activity.
    `CREATE INDEX IF NOT EXISTS ${t.sessions}_by_activity ON ${t.sessions} (updated_at, id)`,
  ];
}

/**
 * The whole schema as separate statements, for teams that apply schema with
 * `wrangler d1 migrations` instead: write them into a migration file (each followed by `;`).
 * The last one records the version, so `store.migrate()` afterwards finds nothing to do.
 */
export function schemaStatements(options: { tablePrefix?: string } = {}): string[] {
  const t = tableNames(options.tablePrefix);
  return [versionTableSql(t), ...schemaV1(t), recordVersionSql(t)];
}

/** The tables were migrated by a newer @agentstore/d1; this one refuses to guess their layout. */
export class SchemaVersionError extends AgentStoreError {
  readonly code = 'SCHEMA_VERSION_UNSUPPORTED' as const;
  readonly found: number;
  constructor(found: number) {
    super(
      `The D1 tables were migrated to schema version ${found}, newer than the ${SCHEMA_VERSION} this ` +
        '@agentstore/d1 understands; upgrade the package',
    );
    this.found = found;
  }
}

/**
 * Creates the tables when missing and records the schema version. Idempotent and safe to run
 * from several workers at once: every statement is `IF NOT EXISTS` or an upsert, and the
 * version-1 statements run in one batch (one transaction).
 */
export async function migrateSchema(db: D1DatabaseLike, t: TableNames): Promise<{ version: number }> {
  await db.prepare(versionTableSql(t)).all();
  const { results } = await db
    .prepare(`SELECT version FROM ${t.schemaVersion} WHERE id = 1`)
    .all<{ version: number }>();
  const found = results[0]?.version ?? 0;
  if (found > SCHEMA_VERSION) throw new SchemaVersionError(found);
  if (found === SCHEMA_VERSION) return { version: found };
  await db.batch([...schemaV1(t), recordVersionSql(t)].map((sql) => db.prepare(sql)));
  return { version: SCHEMA_VERSION };
}
