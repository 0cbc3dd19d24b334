/**
 * Cloudflare D1 store with guarded batch appends.
 * @module @agentstore/d1
 */
export type { D1DatabaseLike, D1ResultLike, D1StatementLike } from './d1-binding.ts';
export { type D1AgentStore, type D1StoreConnection, type D1StoreOptions, d1Store } from './d1-store.ts';
export { D1_PLATFORM_LIMITS, D1_STORE_LIMITS } from './limits.ts';
export {
  DEFAULT_TABLE_PREFIX,
  SCHEMA_VERSION,
  SchemaVersionError,
  schemaStatements,
  type TableNames,
} from './schema.ts';
