import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { init, msg } from './helpers.ts';

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
beforeAll(async () => {
  // Needs a server this process can kill, whatever AGENTSTORE_REDIS_URL says.
  server = await launchRedis({ aof: 'always', ignoreEnv: true });
  client = new Redis(server.info.url);
  store = redisStore({ client });
  expect((await store.durabilityCheck).verified).toBe(true);
});
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await server?.stop();
});

it('a SIGKILL of the server between two appends loses nothing that was acknowledged', async () => {
  const first = [msg(), msg()];
  const { epoch } = await store.acquireLease('crash', { holder: 'w', ttlMs: 60_000, init: init() });
  const lease = { holder: 'w', epoch };
  const { headSeq } = await store.append('crash', {
    expectedSeq: 0,
    messages: first,
    session: { state: 1 },
    lease,
  });

  await server.restart(); // SIGKILL, then the same data dir and port again

  const second = [msg()];
  // The client reconnects by itself; the script cache is gone, so this also exercises the EVAL path.
  await store.append('crash', { expectedSeq: headSeq, messages: second, session: { state: 2 }, lease });
  await server.restart();

  const loaded = await store.load('crash');
  expect(loaded?.messages.map(({ seq, ...m }) => m)).toEqual([...first, ...second]);
  expect(loaded?.session).toMatchObject({ headSeq: 3, state: 2, lease: { holder: 'w', epoch } });
  expect((await store.listSessions({ limit: 10 })).sessions.map((s) => s.id)).toEqual(['crash']);
});
