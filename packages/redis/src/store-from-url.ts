import { type RedisAgentStore, redisStore } from './redis-store.ts';

/**
 * The store a URL names, for tools such as `agentstore inspect`: an ioredis URL
 * (`redis://` or `rediss://`), plus `keyPrefix` as a query parameter when not the default. The
 * store owns its client and quits it on `close()`.
 */
export function storeFromUrl(url: string): RedisAgentStore {
  const parsed = new URL(url);
  const keyPrefix = parsed.searchParams.get('keyPrefix');
  parsed.searchParams.delete('keyPrefix');
  return redisStore({ url: parsed.href }, keyPrefix === null ? {} : { keyPrefix });
}
