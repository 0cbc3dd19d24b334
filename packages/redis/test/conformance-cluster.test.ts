import { describeAgentStoreConformance } from '@agentstore/conformance';
import { type LaunchedServer, launchRedisCluster, type RedisClusterInfo } from '@agentstore/servers';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { redisStore } from '../src/index.ts';
import { redisCapabilities } from '../src/testing/capabilities.ts';
import { uniquePrefix } from './helpers.ts';

// The whole kit again on a 3-master Redis Cluster: sessions spread over slots and nodes, the
// index in a slot of its own, creation going through the index-first path.
const prefix = uniquePrefix('kit-cluster');
let cluster: LaunchedServer<RedisClusterInfo>;
let client: Cluster;

beforeAll(async () => {
  cluster = await launchRedisCluster();
  client = new Cluster(cluster.info.nodes);
});

afterAll(async () => {
  await client?.quit();
  await cluster?.stop();
});

describeAgentStoreConformance({
  name: 'redis cluster',
  createStore: () => redisStore({ client }, { keyPrefix: prefix }),
  capabilities: redisCapabilities(() => client, prefix),
});
