import { SeqConflictError } from '@agentstore/core';
import { type DropProxy, type LaunchedRedis, launchRedis, startDropProxy } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { redisCapabilities } from '../src/testing/capabilities.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

let server: LaunchedRedis;
let proxy: DropProxy;
let client: Redis;
let store: RedisAgentStore;
let prefix: string;
beforeAll(async () => {
  server = await launchRedis();
  proxy = await startDropProxy(server.info.host, server.info.port);
  // ioredis defaults: reconnect, and re-send commands that were in flight when the link dropped.
  client = new Redis({ host: '127.0.0.1', port: proxy.port, retryStrategy: () => 20 });
  prefix = uniquePrefix('lost');
  store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
});
afterAll(async () => {
  await store?.close();
  client?.disconnect();
  await proxy?.close();
  await server?.stop();
});

it('an append whose reply is lost and that ioredis re-sends commits once and reports success', async () => {
  const first = [msg()];
  await store.append('s', { expectedSeq: 0, messages: first, session: { init: init() }, lease: null });

  const second = [msg(), msg()];
  const dropped = proxy.loseNextAnswer();
  const result = await store.append('s', {
    expectedSeq: 1,
    messages: second,
    session: { state: 2 },
    lease: null,
  });
  await dropped; // the first copy ran on the server; its reply never arrived
  expect(result).toEqual({ headSeq: 3 });

  const raw = await redisCapabilities(client, prefix).raw.messages('s');
  expect(raw.map((m) => m.id)).toEqual([...first, ...second].map((m) => m.id));
  expect((await store.load('s'))?.session).toMatchObject({ headSeq: 3, state: 2 });
});

it('another call with the very same messages at the stale seq still gets SeqConflictError', async () => {
  const loaded = await store.load('s');
  const replay = loaded!.messages.slice(1).map(({ seq, ...m }) => m);
  await expect(store.append('s', { expectedSeq: 1, messages: replay, lease: null })).rejects.toMatchObject({
    constructor: SeqConflictError,
    actualSeq: 3,
  });
});
