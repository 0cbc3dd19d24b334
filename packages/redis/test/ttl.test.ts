import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { indexEntries, init, msg, uniquePrefix } from './helpers.ts';

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
let noTtl: RedisAgentStore;
let prefix: string;
const TTL_MS = 3600_000;
beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
  prefix = uniquePrefix('ttl');
  store = redisStore({ client }, { keyPrefix: prefix, ttlSeconds: TTL_MS / 1000, checkDurability: false });
  noTtl = redisStore({ client }, { keyPrefix: uniquePrefix('nottl'), checkDurability: false });
});
afterAll(async () => {
  await store?.close();
  await noTtl?.close();
  await client?.quit();
  await server?.stop();
});

const pttls = async (id: string) => {
  const keys = redisKeys(prefix, id);
  return [await client.pttl(keys.session), await client.pttl(keys.messages)];
};

it('applies the TTL to all of a session’s keys', async () => {
  const { epoch } = await store.acquireLease('s', { holder: 'w', ttlMs: 10_000, init: init() });
  await store.append('s', { expectedSeq: 0, messages: [msg()], lease: { holder: 'w', epoch } });
  for (const ttl of await pttls('s')) {
    expect(ttl).toBeGreaterThan(TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(TTL_MS);
  }
});

it('refreshes the TTL on append', async () => {
  const keys = redisKeys(prefix, 's');
  // Stand in for time passing: shorten what is left, then append.
  await client.pexpire(keys.session, 5_000);
  await client.pexpire(keys.messages, 5_000);
  const loaded = await store.load('s');
  await store.append('s', {
    expectedSeq: loaded!.session.headSeq,
    messages: [msg()],
    lease: loaded!.session.lease,
  });
  for (const ttl of await pttls('s')) expect(ttl).toBeGreaterThan(TTL_MS - 60_000);
});

it('sets no TTL without ttlSeconds', async () => {
  await noTtl.append('n', { expectedSeq: 0, messages: [msg()], session: { init: init() }, lease: null });
  const keys = await client.keys('t-nottl-*}:[sm]');
  expect(keys).toHaveLength(2);
  for (const key of keys) expect(await client.pttl(key)).toBe(-1);
});

it('an expired session disappears from listSessions and its index entry is pruned', async () => {
  await store.append('gone', { expectedSeq: 0, messages: [msg()], session: { init: init() }, lease: null });
  const keys = redisKeys(prefix, 'gone');
  await client.del(keys.session, keys.messages); // what expiry does
  const listed = await store.listSessions({ limit: 10 });
  expect(listed.sessions.map((s) => s.id)).toEqual(['s']);
  expect(await indexEntries(client, prefix)).toBe(1);
});
