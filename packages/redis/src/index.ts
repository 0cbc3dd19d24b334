/**
 * Redis (ioredis) store with atomic Lua appends.
 * @module @agentstore/redis
 */
export type {
  DurabilityReport,
  RedisDurability,
  RedisStoreWarning,
  RedisStoreWarningCode,
} from './durability-check.ts';
export { DEFAULT_KEY_PREFIX, indexMember, sessionTag, validateKeyPrefix } from './keys.ts';
export {
  REDIS_LIMITS,
  type RedisAgentStore,
  type RedisConnection,
  type RedisStoreOptions,
  redisStore,
} from './redis-store.ts';
export { storeFromUrl } from './store-from-url.ts';
