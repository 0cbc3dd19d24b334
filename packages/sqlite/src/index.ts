/**
 * SQLite (better-sqlite3) store.
 * @module @agentstore/sqlite
 */
export {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_TABLE_PREFIX,
  type SqliteStoreOptions,
  type SqliteStoreTarget,
  type SynchronousMode,
  validateTablePrefix,
} from './options.ts';
export { migrate, SCHEMA_VERSION, schemaStatements, type TableNames, tableNames } from './schema.ts';
export { SQLITE_LIMITS, type SqliteStore, sqliteStore } from './sqlite-store.ts';
export { storeFromUrl } from './store-from-url.ts';
