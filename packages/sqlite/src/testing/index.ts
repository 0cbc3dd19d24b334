import type { OpenTestTarget } from '@agentstore/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import type { SynchronousMode } from '../options.ts';
import { sqliteStore } from '../sqlite-store.ts';
import { sqliteCapabilities } from './capabilities.ts';

export { type CapabilityTarget, corrupter, rawFloor, rawReader, sqliteCapabilities } from './capabilities.ts';

/**
 * The SQLite store under test on a file (or, with `memory: true`, one `:memory:` database shared by
 * every store, which is then not durable), with raw-SQL capabilities on their own connection.
 */
export async function sqliteTestTarget(
  options: ({ path: string } | { memory: true }) & {
    tablePrefix?: string;
    synchronous?: SynchronousMode;
    name?: string;
  },
): Promise<OpenTestTarget> {
  const shared = 'memory' in options ? new BetterSqlite3(':memory:') : null;
  const connection = shared ? { database: shared } : { path: (options as { path: string }).path };
  const storeOptions = {
    ...(options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {}),
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
  };
  const capabilities = sqliteCapabilities({ connection, tablePrefix: options.tablePrefix });
  const label = shared ? ':memory:' : `WAL file, synchronous ${options.synchronous ?? 'FULL'}`;
  return {
    name: options.name ?? `sqlite (${label})`,
    reopen: {
      ...('path' in options ? { path: options.path } : { memory: true }),
      ...(options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {}),
      ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
    },
    durable: shared === null,
    createStore: () => sqliteStore(shared ? { database: shared } : connection, storeOptions),
    capabilities,
    async describe() {
      const version = (capabilities.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
      return `SQLite ${version} (better-sqlite3), ${label}`;
    },
    async close() {
      capabilities.close();
      shared?.close();
    },
  };
}
