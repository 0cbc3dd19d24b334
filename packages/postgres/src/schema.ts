import { COMBINED_FILTER_INDEXES } from '@agentstore/core/store';
import { type PostgresStoreOptions, resolveOptions } from './options.ts';
import { SERVER_NOW } from './server-clock.ts';

/** Quoted, schema-qualified names of the store's tables, built from validated identifiers only. */
export interface TableNames {
  schema: string;
  sessions: string;
  messages: string;
  migrations: string;
  /** The function a refused append raises its facts with (migration 4). */
  refuseAppend: string;
  /** Unquoted, for the advisory lock key and statement names. */
  key: string;
}

const quote = (identifier: string) => `"${identifier}"`;

export function tableNames(schema: string, tablePrefix: string): TableNames {
  const qualified = (table: string) => `${quote(schema)}.${quote(`${tablePrefix}${table}`)}`;
  return {
    schema: quote(schema),
    sessions: qualified('sessions'),
    messages: qualified('messages'),
    migrations: qualified('migrations'),
    refuseAppend: qualified('refuse_append'),
    key: `${schema}.${tablePrefix}`,
  };
}

export interface Migration {
  version: number;
  description: string;
  sql(names: TableNames, tablePrefix: string): string;
}

/**
 * Text columns are `COLLATE "C"`: ids sort and compare by bytes, as everywhere else in agentstore,
 * and ISO-8601 timestamps (the client's clock, from `toISOString()`) compare correctly as text.
 * Message bodies and session state are JSON kept as `text`: `jsonb` rejects `\u0000` and
 * reorders keys, and the store decodes them itself anyway.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions and messages',
    sql: (n, prefix) => `
CREATE TABLE IF NOT EXISTS ${n.sessions} (
  id text COLLATE "C" PRIMARY KEY,
  agent_name text COLLATE "C" NOT NULL,
  owner_id text COLLATE "C",
  tenant_id text COLLATE "C",
  state text NOT NULL,
  head_seq bigint NOT NULL DEFAULT 0,
  lease_holder text COLLATE "C",
  lease_epoch bigint NOT NULL DEFAULT 0,
  lease_expires_at text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL
) WITH (fillfactor = 80);
CREATE INDEX IF NOT EXISTS "${prefix}sessions_owner_idx" ON ${n.sessions} (owner_id, id);
CREATE INDEX IF NOT EXISTS "${prefix}sessions_tenant_idx" ON ${n.sessions} (tenant_id, id);
CREATE TABLE IF NOT EXISTS ${n.messages} (
  session_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_id, seq)
);`,
  },
  {
    version: 2,
    description: 'agent-name and activity indexes',
    /*
     * `idle_at` is the retention index's key: NULL (meaning `created_at`) until a retention sweep
     * finds the session active and moves it to `updated_at`. Appends never write an indexed
     * column, so they stay HOT updates; the key never runs ahead of `updated_at`, so every idle
     * session is found. ADD COLUMN without a default is instant; the indexes are built under the
     * migration's lock (on a large existing table, build them CONCURRENTLY by hand first: the
     * IF NOT EXISTS then skips them).
     */
    sql: (n, prefix) => `
ALTER TABLE ${n.sessions} ADD COLUMN IF NOT EXISTS idle_at text COLLATE "C";
CREATE INDEX IF NOT EXISTS "${prefix}sessions_agent_idx" ON ${n.sessions} (agent_name, id);
CREATE INDEX IF NOT EXISTS "${prefix}sessions_idle_idx" ON ${n.sessions} ((COALESCE(idle_at, created_at)), id);`,
  },
  {
    version: 3,
    description: 'combined listSessions filter indexes',
    // One (filters…, id) index per combination of owner, tenant and agent name, so a combined
    // filter reads one page in id order. Built under the migration's lock like version 2's.
    sql: (n, prefix) =>
      COMBINED_FILTER_INDEXES.map(
        ([name, columns]) =>
          `CREATE INDEX IF NOT EXISTS "${prefix}sessions_${name}_idx" ON ${n.sessions} (${columns.join(', ')}, id);`,
      ).join('\n'),
  },
  {
    version: 4,
    description: 'append refusal function',
    // A refused append raises what its own snapshot saw (see statements.ts), so a granted append
    // returns no row at all and a refused one still needs no second round trip. Under READ
    // COMMITTED the UPDATE re-checks its guard on the newest row version, which the statement's
    // snapshot may not show (a lease taken while the append waited for the row): the function
    // also reads the row again, in a fresh snapshot of its own (a VOLATILE function's query takes
    // one), and the client uses that read only when the snapshot would have granted the append.
    sql: (n) => `CREATE OR REPLACE FUNCTION ${n.refuseAppend}(session_id text, seen text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  newest text;
BEGIN
  SELECT json_build_array(head_seq, lease_holder, lease_epoch, lease_expires_at, ${SERVER_NOW})::text
    INTO newest FROM ${n.sessions} WHERE id = session_id;
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = '${APPEND_REFUSED}',
    DETAIL = json_build_array(seen::json, newest::json)::text;
END
$$;`,
  },
  {
    version: 5,
    description: 'session incarnation id',
    // Null on sessions created before it: their tool calls keep the old idempotency-key formula.
    // A nullable column without a default is added without rewriting a row; IF NOT EXISTS makes
    // a repeat (or a racing migrator) a no-op.
    sql: (n) => `ALTER TABLE ${n.sessions} ADD COLUMN IF NOT EXISTS incarnation_id text;`,
  },
];

/** The message of the error a refused append raises; its DETAIL is what the statement saw. */
export const APPEND_REFUSED = 'agentstore: append refused';

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function schemaSql(names: TableNames): string {
  return `CREATE SCHEMA IF NOT EXISTS ${names.schema};`;
}

export function migrationsTableSql(names: TableNames): string {
  return `CREATE TABLE IF NOT EXISTS ${names.migrations} (
  version integer PRIMARY KEY,
  description text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);`;
}

export function recordMigrationSql(names: TableNames, migration: Migration): string {
  // Version and description are constants of this package, never user input.
  return `INSERT INTO ${names.migrations} (version, description) VALUES (${migration.version}, '${migration.description}') ON CONFLICT (version) DO NOTHING;`;
}

/**
 * The whole schema as one idempotent SQL script, for teams that run migrations with their own
 * tool. It records the versions it applies, so a later `store.migrate()` finds nothing to do.
 * Run it in one transaction; concurrent runs of this script are not serialised (`migrate()` is).
 */
export function migrationSql(options: Pick<PostgresStoreOptions, 'schema' | 'tablePrefix'> = {}): string {
  const { schema, tablePrefix } = resolveOptions(options);
  const names = tableNames(schema, tablePrefix);
  const parts = [schemaSql(names), migrationsTableSql(names)];
  for (const migration of MIGRATIONS) {
    parts.push(`-- ${migration.version}: ${migration.description}`, migration.sql(names, tablePrefix).trim());
    parts.push(recordMigrationSql(names, migration));
  }
  return `${parts.join('\n')}\n`;
}
