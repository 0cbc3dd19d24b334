import { compareSessionIds } from '@agentstore/core/store';
import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore, sessionTag } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

const HOSTILE_IDS = [
  '{',
  '}',
  '{}',
  '{a}',
  'a}b{c',
  '}{',
  'x{y}z',
  ':',
  'a:b:{c}:m',
  'with space',
  ' leading and trailing ',
  'new\nline\r\n',
  'tab\there',
  '*?[glob]',
  'quote " and \' and \\',
  '\uFFFD', // what a lone surrogate would collapse into: lone surrogates themselves are refused
  '🦜{emoji}',
  'EVAL "return 1" 0',
  `{${'k'.repeat(1020)}}`,
  'é'.repeat(512), // 1024 UTF-8 bytes
];

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
let prefix: string;
beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
  prefix = uniquePrefix('hostile');
  store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
});
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await server?.stop();
});

/** Redis Cluster's rule: the slot is hashed from the text between the first `{` and the next `}`. */
function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : null;
}

it('every hostile id gets a brace-free tag, distinct from every other id', () => {
  const tags = HOSTILE_IDS.map(sessionTag);
  for (const tag of tags) expect(tag).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(new Set(tags).size).toBe(HOSTILE_IDS.length);
});

it('a session of each hostile id lives under one hash tag and keeps its own data', async () => {
  for (const [i, id] of HOSTILE_IDS.entries()) {
    await store.append(id, {
      expectedSeq: 0,
      messages: [msg({ content: `for ${i}` })],
      session: { init: init({ agentName: `agent-${i}` }) },
      lease: null,
    });
  }
  for (const [i, id] of HOSTILE_IDS.entries()) {
    const loaded = await store.load(id);
    expect(loaded?.session.id).toBe(id);
    expect(loaded?.session.agentName).toBe(`agent-${i}`);
    expect(loaded?.messages.map((m) => m.content)).toEqual([`for ${i}`]);
    const keys = redisKeys(prefix, id);
    expect(hashTag(keys.session)).toBe(sessionTag(id));
    expect(hashTag(keys.messages)).toBe(sessionTag(id));
    expect(await client.exists(keys.session, keys.messages)).toBe(2);
  }
  const sessionKeys = await client.keys(`${prefix}{*`);
  expect(sessionKeys).toHaveLength(HOSTILE_IDS.length * 2);
});

it('listSessions returns every hostile id verbatim, in code point order', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.listSessions({ limit: 5, cursor });
    seen.push(...page.sessions.map((s) => s.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  expect(seen).toEqual([...HOSTILE_IDS].sort(compareSessionIds));
});

it('deleting one hostile id leaves its look-alikes alone', async () => {
  expect(await store.deleteSession('{a}')).toEqual({ deleted: true });
  expect(await store.load('{a}')).toBeNull();
  expect((await store.load('a}b{c'))?.messages).toHaveLength(1);
  expect((await store.load('\uFFFD'))?.session.id).toBe('\uFFFD');
  // Refused by core's boundary on every store, so they can never alias U+FFFD anywhere.
  await expect(store.load('\uD800')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
});
