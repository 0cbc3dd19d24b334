/**
 * PostgreSQL (pg) store with one-round-trip appends.
 * @module @agentstore/postgres
 */
export type { MigrateResult } from './migrate.ts';
export {
  DEFAULT_SCHEMA,
  DEFAULT_TABLE_PREFIX,
  type PostgresStoreOptions,
  type PostgresStoreTarget,
} from './options.ts';
export { POSTGRES_LIMITS, type PostgresStore, postgresStore } from './postgres-store.ts';
export { LATEST_VERSION, migrationSql } from './schema.ts';
export { storeFromUrl } from './store-from-url.ts';
