import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, roundTripCounters, targetOnServer } from '@agentstore/core/testing';
import { Redis } from 'ioredis';
import { redisStore } from '../redis-store.ts';
import { redisCapabilities } from './capabilities.ts';
import { importServers } from './import-servers.ts';

export { FLOOR_LUA, redisCapabilities, redisKeys } from './capabilities.ts';

type SendCommand = (command: unknown, stream?: object, node?: unknown) => unknown;

/**
 * Every command passes through `sendCommand`; a pipeline or MULTI sends its commands with one
 * shared stream object, written to the socket at once, so each such stream counts as one round trip.
 */
function countCommands(client: Redis, tick: () => void): Redis {
  const pipelines = new WeakSet<object>();
  const send = (client.sendCommand as SendCommand).bind(client);
  (client as unknown as { sendCommand: SendCommand }).sendCommand = (command, stream, node) => {
    if (!stream) tick();
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      tick();
    }
    return send(command, stream, node);
  };
  return client;
}

export interface RedisTargetOptions {
  url: string;
  keyPrefix?: string;
  name?: string;
}

/**
 * The Redis store under test on the server at `url`, under its own key prefix, with capabilities
 * written against raw ioredis commands. Every store it creates has a client of its own whose
 * commands are counted (`roundTrips`).
 */
export async function redisTestTarget(options: RedisTargetOptions): Promise<OpenTestTarget> {
  const keyPrefix = options.keyPrefix ?? `agentstore-test-${crypto.randomUUID().slice(0, 8)}:`;
  const ownsPrefix = options.keyPrefix === undefined;
  const counters = roundTripCounters();
  let tickFloor = () => {};
  const client = countCommands(new Redis(options.url, { lazyConnect: false }), () => tickFloor());
  const capabilities = redisCapabilities(client, keyPrefix);
  if (capabilities.floor) tickFloor = counters.track(capabilities.floor);
  return {
    name: options.name ?? 'redis',
    module: import.meta.url,
    reopen: { url: options.url, keyPrefix },
    createStore: () => {
      let tick = () => {};
      const own = countCommands(new Redis(options.url, { lazyConnect: false }), () => tick());
      const store = redisStore({ client: own }, { keyPrefix, onWarning: () => {} });
      const counted: AgentStore = {
        ...store,
        async close() {
          await store.close();
          await own.quit().catch(() => own.disconnect());
        },
      };
      tick = counters.track(counted);
      return counted;
    },
    capabilities,
    roundTrips: counters.count,
    roundTripUnit: 'Redis commands (a pipeline or MULTI/EXEC counts once)',
    async durabilitySettings() {
      const get = async (name: string) =>
        ((await client.config('GET', name).catch(() => [])) as string[])[1] ?? 'unknown';
      const dir = await get('dir');
      return {
        settings: { appendonly: await get('appendonly'), appendfsync: await get('appendfsync') },
        ...(dir !== 'unknown' ? { dataDir: dir } : {}),
      };
    },
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

/**
 * What the kit and the tools open: with a target's `reopen`, the same key prefix from another
 * process; without, a throwaway server from `@agentstore/servers` (or the one
 * `AGENTSTORE_REDIS_URL` names) and a fresh prefix, both gone on close.
 */
export default async function openRedisTarget(
  options?: Partial<RedisTargetOptions>,
): Promise<OpenTestTarget> {
  if (options?.url) return redisTestTarget(options as RedisTargetOptions);
  // A server of the user's own needs no launcher: @agentstore/servers is an optional peer.
  const url = process.env.AGENTSTORE_REDIS_URL;
  if (url) return redisTestTarget({ ...options, url });
  const { launchRedis } = await importServers('@agentstore/redis', 'AGENTSTORE_REDIS_URL', 'a Redis');
  return targetOnServer(
    () => launchRedis(),
    (server) => redisTestTarget({ ...options, url: server.info.url }),
  );
}
