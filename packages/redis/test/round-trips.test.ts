import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { countCommands, init, msg, uniquePrefix } from './helpers.ts';

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
let sent: ReturnType<typeof countCommands>;
beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
  store = redisStore({ client }, { keyPrefix: uniquePrefix('rt') });
  await store.durabilityCheck;
  sent = countCommands(client);
});
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await server?.stop();
});

it('acquire, every append (creating or not, with state and release) and load are one command each', async () => {
  const id = 'round-trips';
  sent.reset();
  const { epoch } = await store.acquireLease(id, { holder: 'w', ttlMs: 60_000, init: init() });
  expect(sent.names).toEqual(['eval']); // first use on this connection sends the script itself

  const lease = { holder: 'w', epoch };
  let headSeq = 0;
  for (let i = 0; i < 5; i++) {
    sent.reset();
    ({ headSeq } = await store.append(id, {
      expectedSeq: headSeq,
      messages: [msg(), msg()],
      session: { state: { step: i } },
      lease,
      releaseLease: i === 4,
    }));
    expect(sent.names).toHaveLength(1);
    expect(sent.names[0]).toMatch(/^eval(sha)?$/);
  }
  expect(headSeq).toBe(10);

  sent.reset();
  const loaded = await store.load(id, { afterSeq: 4 });
  expect(sent.names).toHaveLength(1);
  expect(loaded?.messages.map((m) => m.seq)).toEqual([5, 6, 7, 8, 9, 10]);
  expect(loaded?.session.lease).toBeNull();
});

it('a session created by an append (no acquire) is one command too, index included', async () => {
  sent.reset();
  await store.append('created-by-append', {
    expectedSeq: 0,
    messages: [msg()],
    session: { init: init() },
    lease: null,
  });
  expect(sent.names).toEqual(['evalsha']);
  expect((await store.listSessions({ limit: 10 })).sessions.map((s) => s.id)).toContain('created-by-append');
});

it('falls back to EVAL when the server lost its script cache', async () => {
  await client.script('FLUSH');
  sent.reset();
  const { headSeq } = await store.append('created-by-append', {
    expectedSeq: 1,
    messages: [msg()],
    lease: null,
  });
  expect(headSeq).toBe(2);
  expect(sent.names).toEqual(['evalsha', 'eval']);
});

it('deleteSession is one command on a standalone server, index entries included, whatever the field values', async () => {
  const prefix = uniquePrefix('del');
  const own = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
  // Values whose hash tags exercise every base64url length and character: quotes, dots, braces,
  // multi-byte characters, characters JSON escapes, and long ones.
  const values = ['o', 'ow', 'own', '"q".{x}', 'é😀\u0001\u001f\\\n', 'x'.repeat(700), '-'];
  let n = 0;
  for (const ownerId of values) {
    for (const tenantId of [null, values[(n + 3) % values.length]!]) {
      const id = `s${n++}`;
      await own.append(id, {
        expectedSeq: 0,
        messages: [msg()],
        session: { init: init({ ownerId, tenantId, agentName: values[n % values.length]! }) },
        lease: null,
      });
      sent.reset();
      expect(await own.deleteSession(id)).toEqual({ deleted: true });
      expect(sent.names).toHaveLength(1);
      expect(sent.names[0]).toMatch(/^eval(sha)?$/);
      // Every index key of the prefix is gone: the script named each one the session was in.
      expect(await client.keys(`${prefix}*`)).toEqual([]);
    }
  }
  expect(await own.deleteSession('never')).toEqual({ deleted: false });
  await own.close();
});
