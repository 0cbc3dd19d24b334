import { describeAgentStoreConformance } from '@agentstore/conformance';
import { launchRedis } from '@agentstore/servers';
import { afterAll } from 'vitest';
import { redisTestTarget } from '../src/testing/index.ts';

// One server (AGENTSTORE_REDIS_URL, or a throwaway AOF-always one) and one key prefix for the
// whole kit; every spec gets its own store on a shared client that the stores never close.
const server = await launchRedis();
const target = await redisTestTarget({ url: server.info.url });
describeAgentStoreConformance(target);

afterAll(async () => {
  await target.close();
  await server.stop();
});
