import { InvalidArgumentError } from '@agentstore/core';
import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

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

describe('keyPrefix', () => {
  const bad = [
    '',
    'a{b',
    'a}b',
    '{tag}',
    'has space',
    'star*',
    'new\nline',
    '-leading',
    'x'.repeat(65),
    'ünï',
  ];
  it.each(bad)('rejects %j with InvalidArgumentError before touching Redis', (keyPrefix) => {
    expect(() => redisStore({ client }, { keyPrefix, checkDurability: false })).toThrow(InvalidArgumentError);
  });

  it('rejects a non-string prefix', () => {
    expect(() =>
      redisStore({ client }, { keyPrefix: 42 as unknown as string, checkDurability: false }),
    ).toThrow(InvalidArgumentError);
  });

  it.each(['agentstore:', 'app.prod:v1:', 'A_b-c', 'x'.repeat(64)])('accepts %j', (keyPrefix) => {
    expect(() => redisStore({ client }, { keyPrefix, checkDurability: false })).not.toThrow();
  });

  it('rejects an ioredis client keyPrefix that could break the hash tag', async () => {
    const prefixed = new Redis(server.info.url, { keyPrefix: 'app{x}:', lazyConnect: true });
    expect(() => redisStore({ client: prefixed }, { checkDurability: false })).toThrow(InvalidArgumentError);
    prefixed.disconnect();
  });

  it('rejects a bad ttlSeconds', () => {
    for (const ttlSeconds of [0, -1, 1.5, Number.NaN]) {
      expect(() => redisStore({ client }, { ttlSeconds, checkDurability: false })).toThrow(
        InvalidArgumentError,
      );
    }
  });

  it('keeps stores with different prefixes apart, and every key starts with the prefix', async () => {
    const a = uniquePrefix('a');
    const b = uniquePrefix('b');
    const storeA = redisStore({ client }, { keyPrefix: a, checkDurability: false });
    const storeB = redisStore({ client }, { keyPrefix: b, checkDurability: false });
    await storeA.append('same-id', {
      expectedSeq: 0,
      messages: [msg()],
      session: { init: init() },
      lease: null,
    });
    expect(await storeB.load('same-id')).toBeNull();
    expect((await storeB.listSessions({ limit: 10 })).sessions).toEqual([]);
    const keys = await client.keys(`${a}*`);
    const own = redisKeys(a, 'same-id');
    // The session's two keys, and its entries in the every-session, agent and activity indexes.
    expect(keys).toEqual(expect.arrayContaining([own.messages, own.session]));
    expect(keys.filter((key) => key.startsWith(`${a}ix:{`))).toHaveLength(3);
    expect(keys).toHaveLength(5);
  });
});
