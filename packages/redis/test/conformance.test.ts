import { describeAgentStoreConformance } from '@agentstore/conformance';
import { type LaunchedRedis, launchRedis } from '@agentstore/conformance/launchers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { redisStore } from '../src/index.ts';
import { redisCapabilities } from './capabilities.ts';
import { uniquePrefix } from './helpers.ts';

// One server (AGENTSTORE_REDIS_URL, or a throwaway AOF-always one) and one key prefix for the
// whole kit; every spec gets its own store on a shared client that the stores never close.
const prefix = uniquePrefix('kit');
let server: LaunchedRedis;
let client: Redis;

beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
});

afterAll(async () => {
  await client?.quit();
  await server?.stop();
});

describeAgentStoreConformance({
  name: 'redis',
  createStore: () => redisStore({ client }, { keyPrefix: prefix }),
  capabilities: redisCapabilities(() => client, prefix),
});
