/**
 * SQLite (better-sqlite3) store.
 * @module @agentstore/sqlite
 */

// First: refuses a Node whose better-sqlite3 would crash, before the driver is loaded.
import './node-guard.ts';

// The schema is core's SQLite dialect, shared with @agentstore/d1.
export {
  SQLITE_SCHEMA_VERSION as SCHEMA_VERSION,
  type SqliteTableNames as TableNames,
  sqliteSchemaStatements as schemaStatements,
  sqliteTableNames as tableNames,
} from '@agentstore/sqlite-dialect';
export {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_TABLE_PREFIX,
  type SqliteStoreOptions,
  type SqliteStoreTarget,
  type SynchronousMode,
  validateTablePrefix,
} from './options.ts';
export { migrate } from './schema.ts';
export { SQLITE_LIMITS, type SqliteStore, sqliteStore } from './sqlite-store.ts';
export { storeFromUrl } from './store-from-url.ts';
