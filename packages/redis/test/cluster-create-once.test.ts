import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisStore } from '../src/index.ts';
import { indexKeys } from '../src/indexes.ts';
import { indexMember, keySpace } from '../src/keys.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

/*
 * The Cluster creation protocol (marker, entries once, then the session), run on a standalone
 * server through a client that says it is a Cluster, so the interleavings can be forced with
 * hooks. The real Cluster runs it in cluster.test.ts.
 */
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

/** `client`, seen as a Cluster; `afterZadds` runs once every ZADD of one creation has answered. */
function asCluster(hooks: { afterZadds?: () => Promise<void> } = {}) {
  const fake = Object.create(client) as Redis & { isCluster: boolean };
  Object.defineProperty(fake, 'isCluster', { value: true });
  const zadds: string[] = [];
  let pending = 0;
  fake.zadd = (async (...args: Parameters<Redis['zadd']>) => {
    zadds.push(String(args[0]));
    pending += 1;
    const result = await client.zadd(...args);
    pending -= 1;
    if (pending === 0) await hooks.afterZadds?.();
    return result;
  }) as Redis['zadd'];
  return { fake, zadds };
}

const fields = init({ ownerId: 'o', tenantId: 't' });

it('a Cluster creation adds each index entry once, and leaves no marker behind', async () => {
  const prefix = uniquePrefix('once');
  const { fake, zadds } = asCluster();
  const store = redisStore({ client: fake }, { keyPrefix: prefix, checkDurability: false });
  await store.append('s', { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
  const ix = indexKeys(prefix);
  const expected = [...ix.memberships('s', fields), ix.activityKey('s')];
  expect(zadds.sort()).toEqual(expected.sort());
  for (const key of expected) expect(await client.zscore(key, indexMember('s'))).not.toBeNull();
  expect(await client.exists(keySpace(prefix).session('s').creating)).toBe(0);

  zadds.length = 0;
  await store.acquireLease('t', { holder: 'w', ttlMs: 60_000, init: fields });
  expect(zadds).toHaveLength(expected.length);
  expect(
    (await store.listSessions({ ownerId: 'o', tenantId: 't', limit: 10 })).sessions.map((x) => x.id),
  ).toEqual(['s', 't']);
  await store.close();
});

it('a creation whose marker lapsed before the session was written adds its entries again first', async () => {
  const prefix = uniquePrefix('lapsed');
  const ix = indexKeys(prefix);
  const member = indexMember('s');
  const entries = [...ix.memberships('s', fields), ix.activityKey('s')];
  let lapsed = false;
  const { fake, zadds } = asCluster({
    afterZadds: async () => {
      if (lapsed) return;
      lapsed = true;
      // The creator stalls past the marker, and a prune that finds neither marker nor session
      // removes its entries.
      await client.del(keySpace(prefix).session('s').creating);
      for (const key of entries) await client.zrem(key, member);
    },
  });
  const store = redisStore({ client: fake }, { keyPrefix: prefix, checkDurability: false });
  await store.append('s', { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
  expect(zadds).toHaveLength(2 * entries.length);
  for (const key of entries) expect(await client.zscore(key, member)).not.toBeNull();
  expect((await store.load('s'))?.session.headSeq).toBe(1);
  await store.close();
});
