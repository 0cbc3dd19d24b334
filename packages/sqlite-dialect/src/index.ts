/**
 * The one SQLite dialect of agentstore, shared by `@agentstore/sqlite` (better-sqlite3) and
 * `@agentstore/d1` (Cloudflare D1): identifier rules, DDL, schema version, the guard predicates,
 * the load and raw-reader SQL, and row decoding. The drivers differ in how they bind parameters
 * (better-sqlite3: `@name`; D1: `?N` only), so SQL that takes values is built from a
 * `Placeholders` map the adapter supplies.
 */
import {
  InvalidArgumentError,
  type MessageRecord,
  SchemaVersionError,
  type SessionRecord,
} from '@agentstore/core';
import {
  COMBINED_FILTER_INDEXES,
  decodeSessionColumns,
  decodeStoredMessage,
  type SessionColumns,
} from '@agentstore/core/store';

/** The schema version both SQLite adapters write and read. */
export const SQLITE_SCHEMA_VERSION = 4;
export const SQLITE_DEFAULT_TABLE_PREFIX = 'agentstore_';

/**
 * A prefix ends up inside SQL identifiers, so it is held to a strict pattern: a letter, then up to
 * 47 letters, digits or underscores; `sqlite_` is reserved by SQLite (and `_cf_` by D1, which a
 * leading letter already rules out).
 */
const PREFIX_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

export function validateSqliteTablePrefix(prefix: unknown): asserts prefix is string {
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
}

/** Quoted table names for one prefix. Only ever built from a validated prefix. */
export interface SqliteTableNames {
  prefix: string;
  sessions: string;
  messages: string;
  schemaVersion: string;
}

export function sqliteTableNames(prefix: string = SQLITE_DEFAULT_TABLE_PREFIX): SqliteTableNames {
  validateSqliteTablePrefix(prefix);
  return {
    prefix,
    sessions: `"${prefix}sessions"`,
    messages: `"${prefix}messages"`,
    schemaVersion: `"${prefix}schema_version"`,
  };
}

/** Creates the version table; run before reading the version. */
export const sqliteVersionTableSql = (t: SqliteTableNames): string =>
  `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT`;

export const sqliteSelectVersionSql = (t: SqliteTableNames): string =>
  `SELECT version FROM ${t.schemaVersion} WHERE id = 1`;

/** Records the current version; never moves it backwards (an older package racing a newer one). */
export const sqliteRecordVersionSql = (t: SqliteTableNames): string =>
  `INSERT INTO ${t.schemaVersion} (id, version) VALUES (1, ${SQLITE_SCHEMA_VERSION})
  ON CONFLICT (id) DO UPDATE SET version = max(version, excluded.version)`;

/**
 * Version 1 DDL, one statement per string (D1 prepares one at a time). STRICT makes SQLite reject
 * a value of the wrong type instead of storing it. Messages keep a rowid (a body can be large,
 * which WITHOUT ROWID tables handle poorly); `PRIMARY KEY (session_id, seq)` makes a second
 * writer of one seq fail even if a guard were wrong. `id` and `role` are columns so a reader can
 * settle a lost acknowledgement (and a raw reader can inspect rows) without decoding bodies. The
 * indexes serve `listSessions` filters; their columns never change after a session is created.
 * Version 2 adds (updated_at, id) for `deleteIdleSessions`; version 3 adds one index per
 * combination of filters, so a combined filter reads one page of entries in `id` order instead of
 * walking every session of its first filter; version 4 adds `incarnation_id` (null on sessions
 * created before it). An upgrade runs the same IF NOT EXISTS statements, so it only adds what is
 * missing, and adds the column to a table made before version 4.
 */
/** Version 3: one (filters…, id) index per combination of two or three `listSessions` filters. */
const combinedFilterIndexes = (t: SqliteTableNames): string[] =>
  COMBINED_FILTER_INDEXES.map(
    ([name, columns]) =>
      `CREATE INDEX IF NOT EXISTS "${t.prefix}sessions_${name}_idx" ON ${t.sessions} (${columns.join(', ')}, id)`,
  );

export function sqliteSchemaV1(t: SqliteTableNames): string[] {
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
  updated_at TEXT NOT NULL,
  incarnation_id TEXT
) STRICT`,
    `CREATE INDEX IF NOT EXISTS "${t.prefix}sessions_owner_idx" ON ${t.sessions} (owner_id, id)`,
    `CREATE INDEX IF NOT EXISTS "${t.prefix}sessions_tenant_idx" ON ${t.sessions} (tenant_id, id)`,
    `CREATE INDEX IF NOT EXISTS "${t.prefix}sessions_agent_idx" ON ${t.sessions} (agent_name, id)`,
    ...combinedFilterIndexes(t),
    // Version 2: retention walks sessions by last activity.
    `CREATE INDEX IF NOT EXISTS "${t.prefix}sessions_idle_idx" ON ${t.sessions} (updated_at, id)`,
    `CREATE TABLE IF NOT EXISTS ${t.messages} (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  role TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT`,
  ];
}

/**
 * The whole schema as separate statements, for teams that apply schema with their own migration
 * tooling (e.g. `wrangler d1 migrations`). Every statement is idempotent, and the last one records
 * the version, so `migrate()` afterwards finds nothing to do.
 */
export function sqliteSchemaStatements(options: { tablePrefix?: string } = {}): string[] {
  const t = sqliteTableNames(options.tablePrefix);
  return [sqliteVersionTableSql(t), ...sqliteSchemaV1(t), sqliteRecordVersionSql(t)];
}

export { SchemaVersionError } from '@agentstore/core';

/**
 * What `migrate()` must do given the version it read: nothing (current), the idempotent DDL
 * (none yet, or version 1, which lacks the activity index), or refuse (newer).
 */
export function sqliteMigrationPlan(t: SqliteTableNames, found: number): string[] {
  if (found > SQLITE_SCHEMA_VERSION) throw new SchemaVersionError(found, SQLITE_SCHEMA_VERSION);
  if (found === SQLITE_SCHEMA_VERSION) return [];
  // A table made before version 4 lacks the column (ADD COLUMN has no IF NOT EXISTS: the recorded
  // version is what makes it run once). Adding a nullable column rewrites no row.
  const addIncarnation = found >= 1 ? [`ALTER TABLE ${t.sessions} ADD COLUMN incarnation_id TEXT`] : [];
  return [...sqliteSchemaV1(t), ...addIncarnation, sqliteRecordVersionSql(t)];
}

/** How a driver spells a bound parameter: better-sqlite3 `@name`, D1 `?N`. */
export type Placeholders<Name extends string> = Readonly<Record<Name, string>>;

/**
 * A lease nobody may hold against `now`: no holder, or expired at or before `now` (ISO-8601 text
 * compares in time order; an expiry past year 9999 is written `+0…` and counts as live).
 */
export const sqliteLeaseFree = (p: Placeholders<'now'>, column = ''): string =>
  `(${column}lease_holder IS NULL OR (${column}lease_expires_at <= ${p.now} AND ${column}lease_expires_at NOT GLOB '+*'))`;

/**
 * The database's clock as the ISO-8601 text lease expiries are stored in (`%f` is SS.SSS), plus
 * an optional number of ms (a placeholder or literal). Leases are granted and judged by this one
 * clock, never a client's `Date`, so a client whose clock is off can neither take a live lease nor
 * stretch or shorten one. Pass it as `sqliteLeaseFree`'s `now`.
 */
export const sqliteNowIso = (plusMs?: string): string =>
  `strftime('%Y-%m-%dT%H:%M:%fZ', 'now'${plusMs ? `, '+' || (${plusMs} / 1000.0) || ' seconds'` : ''})`;

/** The lease a writer presents still holds: same holder, same epoch. */
export const sqliteLeaseHeld = (p: Placeholders<'holder' | 'epoch'>, column = ''): string =>
  `(${column}lease_holder IS ${p.holder} AND ${column}lease_epoch IS ${p.epoch})`;

export const SQLITE_SESSION_COLUMNS =
  'id, agent_name, owner_id, tenant_id, state, head_seq, lease_holder, lease_epoch, lease_expires_at, created_at, updated_at, incarnation_id';

export const sqliteSelectSessionSql = (t: SqliteTableNames, p: Placeholders<'sessionId'>): string =>
  `SELECT ${SQLITE_SESSION_COLUMNS} FROM ${t.sessions} WHERE id = ${p.sessionId}`;

export const sqliteSelectMessagesSql = (
  t: SqliteTableNames,
  p: Placeholders<'sessionId' | 'afterSeq'>,
): string =>
  `SELECT seq, message FROM ${t.messages} WHERE session_id = ${p.sessionId} AND seq > ${p.afterSeq} ORDER BY seq`;

/** Rows per message INSERT: one multi-row statement beats one per message; chunks keep caches small. */
export const SQLITE_MESSAGE_COLUMNS = '(session_id, seq, id, role, message)';

/** A session row as both drivers return it: core's SQL session layout. */
export type SqliteSessionRow = SessionColumns & { head_seq: number; lease_epoch: number };

/** A message row as `load` selects it: the stored JSON is the message as appended; `seq` comes from the key. */
export interface SqliteMessageRow {
  seq: number;
  message: string;
}

export const decodeSqliteSession = (row: SqliteSessionRow): SessionRecord => decodeSessionColumns(row);

export function decodeSqliteMessage(sessionId: string, row: SqliteMessageRow): MessageRecord {
  return decodeStoredMessage(sessionId, row.seq, row.message);
}

/** The raw reader's session query (for `@agentstore/<adapter>/testing`), camelCase columns. */
export const sqliteRawSessionSql = (t: SqliteTableNames, p: Placeholders<'sessionId'>): string =>
  `SELECT id, head_seq AS headSeq, owner_id AS ownerId, tenant_id AS tenantId,
     lease_holder AS leaseHolder, lease_epoch AS leaseEpoch FROM ${t.sessions} WHERE id = ${p.sessionId}`;

/**
 * The raw reader's message query: `content` through SQLite's own JSON reader, so an undecodable
 * row yields its raw text instead of failing.
 */
export const sqliteRawMessagesSql = (t: SqliteTableNames, p: Placeholders<'sessionId'>): string =>
  `SELECT seq, id, role,
     CASE WHEN json_valid(message) THEN json_extract(message, '$.content') ELSE message END AS content
   FROM ${t.messages} WHERE session_id = ${p.sessionId} ORDER BY seq`;
