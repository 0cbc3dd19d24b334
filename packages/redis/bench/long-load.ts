/**
 * One long session's `load`: time and memory around it (heap and RSS deltas next to the size of
 * the result), on a throwaway server (or AGENTSTORE_REDIS_URL). Not in CI. From packages/redis:
 *   pnpm run long-load                    # 100,000 messages; LONG_MESSAGES=… to change
 */
import { machineInfo, measureLongLoad } from '@agentstore/bench';
import { launchRedis } from '@agentstore/servers';
import { redisStore } from '../src/index.ts';

const server = await launchRedis();
const store = redisStore({ url: server.info.url }, { checkDurability: false });
try {
  await measureLongLoad('Redis', store, machineInfo());
} finally {
  await store.close();
  await server.stop();
}
