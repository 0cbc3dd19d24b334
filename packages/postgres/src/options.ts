import { InvalidArgumentError } from '@agentstore/core';
import type { Pool } from 'pg';

/** Where the store keeps its data: your own `pg.Pool` (never ended by the store), or a URL it opens a pool for. */
export type PostgresStoreTarget = { pool: Pool } | { connectionString: string };

export interface PostgresStoreOptions {
  /** Schema holding the tables; created by `migrate()` if absent. Default `public`. */
  schema?: string;
  /** Prepended to every table and index name. Default `agentstore_`. */
  tablePrefix?: string;
  /**
   * Send hot statements as named prepared statements (parsed and planned once per connection).
   * Default true. Turn off behind a transaction-mode pooler that does not track prepared
   * statements (PgBouncer before 1.21, or with `max_prepared_statements = 0`): each query then
   * uses the unnamed statement and works on any server connection.
   */
  preparedStatements?: boolean;
}

export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_TABLE_PREFIX = 'agentstore_';

// Lower-case only, so a quoted name means the same as an unquoted one in hand-written SQL.
// Lengths leave room for the longest suffix within PostgreSQL's 63-byte identifier limit.
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
const TABLE_PREFIX_PATTERN = /^(?:[a-z_][a-z0-9_]{0,39})?$/;

/** Schema and prefix end up in SQL identifiers, so only a strict pattern is accepted. */
export function validateSchema(schema: unknown): asserts schema is string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema)) {
    throw new InvalidArgumentError({
      argument: 'schema',
      reason: `must match ${SCHEMA_PATTERN} (lower-case letters, digits and _, not starting with a digit)`,
    });
  }
}

export function validateTablePrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || !TABLE_PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError({
      argument: 'tablePrefix',
      reason: `must match ${TABLE_PREFIX_PATTERN} (lower-case letters, digits and _, not starting with a digit)`,
    });
  }
}

export interface ResolvedOptions {
  schema: string;
  tablePrefix: string;
  preparedStatements: boolean;
}

export function resolveOptions(options: PostgresStoreOptions = {}): ResolvedOptions {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const tablePrefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  validateSchema(schema);
  validateTablePrefix(tablePrefix);
  const preparedStatements = options.preparedStatements ?? true;
  if (typeof preparedStatements !== 'boolean') {
    throw new InvalidArgumentError({ argument: 'preparedStatements', reason: 'must be a boolean' });
  }
  return { schema, tablePrefix, preparedStatements };
}
