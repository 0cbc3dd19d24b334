import BetterSqlite3, { type Database } from 'better-sqlite3';
import {
  DEFAULT_BUSY_TIMEOUT_MS,
  type SqliteStoreOptions,
  type SqliteStoreTarget,
  validateBusyTimeout,
  validateSynchronous,
} from './options.ts';

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
    if (options.synchronous !== undefined) target.database.pragma(`synchronous = ${options.synchronous}`);
    return { database: target.database, owned: false };
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  validateBusyTimeout(busyTimeoutMs);
  const database = new BetterSqlite3(target.path, { timeout: busyTimeoutMs });
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // `:memory:` and temporary databases answer `memory`; WAL applies to files only.
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  } catch (error) {
    database.close();
    throw error;
  }
  return { database, owned: true };
}
