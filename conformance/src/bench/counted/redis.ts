import type { AgentStore } from '@agentstore/core';
import type { StoreCapabilities } from '@agentstore/core/testing';
import type { Redis } from 'ioredis';
import { importAdapterEntry } from './adapter-import.ts';
import type { CountedBackend } from './types.ts';

interface RedisAdapter {
  redisStore(target: { client: Redis }, options: { keyPrefix: string; onWarning: () => void }): AgentStore;
}
interface RedisTesting {
  redisCapabilities(client: Redis, prefix: string): StoreCapabilities;
}

type SendCommand = (command: unknown, stream?: object, node?: unknown) => unknown;

/**
 * An ioredis client of our own on the target's key prefix. Every command passes through
 * `sendCommand`; a pipeline or MULTI sends its commands with one shared stream object, written
 * to the socket at once, so each such stream counts as one round trip.
 */
export async function countedRedis(reopen: Record<string, string | boolean>): Promise<CountedBackend> {
  const { url, keyPrefix } = reopen;
  if (typeof url !== 'string' || typeof keyPrefix !== 'string') {
    throw new Error('the redis target does not say how to reopen it (url, keyPrefix)');
  }
  const { module: adapter, requireFromAdapter } = await importAdapterEntry<RedisAdapter>('@agentstore/redis');
  const { module: testing } = await importAdapterEntry<RedisTesting>('@agentstore/redis/testing');
  const { Redis: RedisClient } = requireFromAdapter('ioredis') as typeof import('ioredis');
  const client = new RedisClient(url);
  await client.ping();
  let roundTrips = 0;
  const pipelines = new WeakSet<object>();
  const send = (client.sendCommand as SendCommand).bind(client);
  (client as unknown as { sendCommand: SendCommand }).sendCommand = (command, stream, node) => {
    if (!stream) roundTrips += 1;
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      roundTrips += 1;
    }
    return send(command, stream, node);
  };
  const store = adapter.redisStore({ client }, { keyPrefix, onWarning: () => {} });
  return {
    method: 'driver',
    unit: 'Redis commands (a pipeline or MULTI/EXEC counts once)',
    store,
    floor: testing.redisCapabilities(client, keyPrefix).floor ?? null,
    count: () => roundTrips,
    async close() {
      await store.close();
      await client.quit();
    },
  };
}
