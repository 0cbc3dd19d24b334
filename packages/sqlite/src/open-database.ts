import { InvalidArgumentError } from '@agentstore/core';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import {
  DEFAULT_BUSY_TIMEOUT_MS,
  type SqliteStoreOptions,
  type SqliteStoreTarget,
  validateBusyTimeout,
  validateSynchronous,
} from './options.ts';
import { notADatabase, requireSchema } from './schema.ts';

export interface OpenedDatabase {
  database: Database;
  /** True when the store opened the file and must close it. */
  owned: boolean;
}

/**
 * Opens the file in WAL mode (readers never block the writer, one fsync per commit) with the
 * chosen `synchronous` level and a busy timeout, so several processes on one file wait for the
 * write lock instead of failing. A database passed in keeps its own settings, except
 * `synchronous` when it is given explicitly.
 */
export function openDatabase(target: SqliteStoreTarget, options: SqliteStoreOptions): OpenedDatabase {
  if (options.synchronous !== undefined) validateSynchronous(options.synchronous);
  if ('database' in target) {
    if (options.readOnly === true) {
      throw new InvalidArgumentError({
        argument: 'readOnly',
        reason: 'applies to { path }; open your connection with { readonly: true }',
      });
    }
    if (options.synchronous !== undefined) target.database.pragma(`synchronous = ${options.synchronous}`);
    return { database: target.database, owned: false };
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  validateBusyTimeout(busyTimeoutMs);
  if (options.readOnly === true)
    return { database: openReadOnly(target.path, busyTimeoutMs, options), owned: true };
  const database = new BetterSqlite3(target.path, { timeout: busyTimeoutMs });
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // `:memory:` and temporary databases answer `memory`; WAL applies to files only.
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  } catch (error) {
    database.close();
    throw notADatabase(error, target.path);
  }
  return { database, owned: true };
}

/**
 * SQLite's own read-only mode: the file must exist and is never written (no tables created, the
 * journal mode left as it is), and it must already hold agentstore's schema.
 */
function openReadOnly(path: string, busyTimeoutMs: number, options: SqliteStoreOptions): Database {
  let database: Database;
  try {
    database = new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_CANTOPEN') throw error;
    throw new InvalidArgumentError({
      argument: 'path',
      reason: `${path} does not exist or cannot be opened`,
    });
  }
  try {
    requireSchema(database, {
      ...(options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {}),
      path,
    });
  } catch (error) {
    database.close();
    throw notADatabase(error, path);
  }
  return database;
}
