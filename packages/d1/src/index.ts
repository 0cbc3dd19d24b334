/**
 * Cloudflare D1 store with guarded batch appends.
 * @module @agentstore/d1
 */

// The schema is core's SQLite dialect, shared with @agentstore/sqlite. `schemaStatements` is for
// teams that apply schema with `wrangler d1 migrations`: one statement per entry, each followed
// by `;` in a migration file; the last records the version, so `migrate()` finds nothing to do.
export {
  SchemaVersionError,
  SQLITE_DEFAULT_TABLE_PREFIX as DEFAULT_TABLE_PREFIX,
  SQLITE_SCHEMA_VERSION as SCHEMA_VERSION,
  type SqliteTableNames as TableNames,
  sqliteSchemaStatements as schemaStatements,
} from '@agentstore/sqlite-dialect';
export type { D1DatabaseLike, D1ResultLike, D1StatementLike } from './d1-binding.ts';
export { type D1AgentStore, type D1StoreConnection, type D1StoreOptions, d1Store } from './d1-store.ts';
export { D1_PLATFORM_LIMITS, D1_STORE_LIMITS } from './limits.ts';
