import { launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { redisTestTarget } from '../src/testing/index.ts';
import { init, msg } from './helpers.ts';

const server = await launchRedis();
afterAll(() => server.stop());

it('a test target that chose its key prefix removes every key it wrote when closed', async () => {
  const target = await redisTestTarget({ url: server.info.url });
  const prefix = String(target.reopen?.keyPrefix);
  const store = await target.createStore();
  await store.append('kept-until-close', {
    expectedSeq: 0,
    messages: [msg()],
    session: { init: init() },
    lease: null,
  });
  await store.close();
  const raw = new Redis(server.info.url);
  try {
    expect((await raw.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    await target.close();
    expect(await raw.keys(`${prefix}*`)).toEqual([]);
  } finally {
    await raw.quit();
  }
});
