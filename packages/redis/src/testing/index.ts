import type { OpenTestTarget } from '@agentstore/core/testing';
import { Redis } from 'ioredis';
import { redisStore } from '../redis-store.ts';
import { redisCapabilities } from './capabilities.ts';

export { FLOOR_LUA, redisCapabilities, redisKeys } from './capabilities.ts';

/**
 * The Redis store under test on the server at `url`, under its own key prefix, with capabilities
 * written against raw ioredis commands on a shared client the stores never close.
 */
export async function redisTestTarget(options: {
  url: string;
  keyPrefix?: string;
  name?: string;
}): Promise<OpenTestTarget> {
  const keyPrefix = options.keyPrefix ?? `agentstore-test-${crypto.randomUUID().slice(0, 8)}:`;
  const ownsPrefix = options.keyPrefix === undefined;
  const client = new Redis(options.url, { lazyConnect: false });
  return {
    name: options.name ?? 'redis',
    reopen: { url: options.url, keyPrefix },
    createStore: () => redisStore({ client }, { keyPrefix, onWarning: () => {} }),
    capabilities: redisCapabilities(client, keyPrefix),
    async describe() {
      const info = String(await client.info('server'));
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
      const [, aof] = (await client.config('GET', 'appendfsync').catch(() => [])) as string[];
      return `Redis ${version} (ioredis), appendfsync ${aof ?? 'unknown'}`;
    },
    async close() {
      // A target that made its prefix removes what it wrote, so a shared server is left clean.
      if (ownsPrefix) {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
          if (keys.length) await client.unlink(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      await client.quit();
    },
  };
}
