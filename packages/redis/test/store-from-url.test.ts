import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisStore, storeFromUrl } from '../src/index.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

let server: LaunchedRedis;
beforeAll(async () => {
  server = await launchRedis();
});
afterAll(() => server?.stop());

it('opens the server a redis:// URL names, with keyPrefix from its query', async () => {
  const keyPrefix = uniquePrefix('url');
  const writer = redisStore({ url: server.info.url }, { keyPrefix });
  const { epoch } = await writer.acquireLease('s', { holder: 'h', ttlMs: 10_000, init: init() });
  await writer.append('s', { expectedSeq: 0, messages: [msg({ id: 'm1' })], lease: { holder: 'h', epoch } });
  await writer.close();
  const url = new URL(server.info.url);
  url.searchParams.set('keyPrefix', keyPrefix);
  const store = storeFromUrl(url.href);
  try {
    expect((await store.load('s'))!.messages.map((m) => m.id)).toEqual(['m1']);
  } finally {
    await store.close(); // quits the client it opened
  }
});
