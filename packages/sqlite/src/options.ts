import { InvalidArgumentError } from '@agentstore/core';
import { SQLITE_DEFAULT_TABLE_PREFIX, validateSqliteTablePrefix } from '@agentstore/sqlite-dialect';
import type { Database } from 'better-sqlite3';

/** SQLite's `PRAGMA synchronous` levels that keep a WAL database uncorrupted after a crash. */
export type SynchronousMode = 'FULL' | 'NORMAL' | 'EXTRA';

/** Where the store keeps its data: a file it opens (and closes), or a connection you own. */
export type SqliteStoreTarget = { path: string } | { database: Database };

export interface SqliteStoreOptions {
  /** Prepended to every table and index name. Default `agentstore_`. */
  tablePrefix?: string;
  /**
   * `PRAGMA synchronous` for the store's connection. Default `FULL`: an acknowledged append
   * survives an OS crash or power loss. `NORMAL` is faster in WAL mode, never corrupts the
   * database, but an OS crash may lose the last transactions. On a database you pass in, it is
   * applied only when given.
   */
  synchronous?: SynchronousMode;
  /**
   * How long a write waits for another connection's lock before failing (`PRAGMA busy_timeout`),
   * on a file the store opens. Default 5000 ms.
   */
  busyTimeoutMs?: number;
  /**
   * Open the file read-only (it must exist and already hold the current schema): nothing is
   * created, migrated or switched to WAL, and every write fails. For inspectors such as
   * `agentstore inspect`. Only with `{ path }`.
   */
  readOnly?: boolean;
}

export const DEFAULT_TABLE_PREFIX = SQLITE_DEFAULT_TABLE_PREFIX;
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** The prefix ends up in SQL identifiers: core's SQLite dialect holds it to a strict pattern. */
export const validateTablePrefix: (prefix: unknown) => asserts prefix is string = validateSqliteTablePrefix;

const SYNCHRONOUS_MODES: readonly SynchronousMode[] = ['FULL', 'NORMAL', 'EXTRA'];

export function validateSynchronous(mode: unknown): asserts mode is SynchronousMode {
  if (!SYNCHRONOUS_MODES.includes(mode as SynchronousMode)) {
    throw new InvalidArgumentError({
      argument: 'synchronous',
      reason: `must be one of ${SYNCHRONOUS_MODES.join(', ')}`,
    });
  }
}

export function validateBusyTimeout(ms: unknown): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
    throw new InvalidArgumentError({ argument: 'busyTimeoutMs', reason: 'must be a non-negative integer' });
  }
}
