import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { INDEX_BUCKETS, indexKeys } from '../src/indexes.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { countCommands, indexEntries, init, msg, uniquePrefix } from './helpers.ts';

/** Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag, mod 16384. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  const tag = open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
let prefix: string;
let sent: ReturnType<typeof countCommands>;
const SESSIONS = 400;
const id = (i: number) => `s-${String(i).padStart(4, '0')}`;

beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
  prefix = uniquePrefix('ix');
  store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
  for (let i = 0; i < SESSIONS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        store.append(id(i + j), {
          expectedSeq: 0,
          messages: [msg()],
          session: {
            init: init({
              ownerId: `owner-${(i + j) % 40}`,
              tenantId: `tenant-${(i + j) % 4}`,
              agentName: `agent-${(i + j) % 2}`,
            }),
          },
          lease: null,
        }),
      ),
    );
  }
  sent = countCommands(client);
}, 60_000);
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await server?.stop();
});

const listAll = async (filter: Record<string, string>, limit: number) => {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<RedisAgentStore['listSessions']>> = await store.listSessions({
      ...filter,
      limit,
      cursor,
    });
    ids.push(...page.sessions.map((s) => s.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids;
};

describe('Redis session indexes', () => {
  it('spread over the Cluster: the buckets of one index, and the indexes of different values, hash to different slots', () => {
    const ix = indexKeys(prefix);
    expect(new Set(ix.lex('a').map(slotOf)).size).toBe(INDEX_BUCKETS);
    expect(new Set(ix.lex('g', 'agent-0').map(slotOf)).size).toBe(INDEX_BUCKETS);
    expect(new Set(ix.activity().map(slotOf)).size).toBe(INDEX_BUCKETS);
    const owners = Array.from({ length: 40 }, (_, i) => ix.lex('o', `owner-${i}`)[0]!);
    expect(new Set(owners.map(slotOf)).size).toBeGreaterThan(35);
  });

  it('a filtered listing of a value with no sessions costs one command per bucket, whatever the data set', async () => {
    for (const filter of [{ ownerId: 'nobody' }, { tenantId: 'nobody' }, { agentName: 'nobody' }]) {
      sent.reset();
      expect(await store.listSessions({ ...filter, limit: 20 })).toEqual({ sessions: [], nextCursor: null });
      expect(sent.names).toEqual(Array(INDEX_BUCKETS).fill('zrangebylex'));
    }
  });

  it('a combined filter that matches nothing costs one command per bucket, though each filter alone matches 100 or more', async () => {
    // tenant-3 holds only odd sessions (agent-1), owner-7 only tenant-3: each pair below is empty.
    for (const filter of [
      { tenantId: 'tenant-3', agentName: 'agent-0' },
      { ownerId: 'owner-7', agentName: 'agent-0' },
      { ownerId: 'owner-7', tenantId: 'tenant-2' },
      { ownerId: 'owner-7', tenantId: 'tenant-3', agentName: 'agent-0' },
    ]) {
      sent.reset();
      expect(await store.listSessions({ ...filter, limit: 20 })).toEqual({ sessions: [], nextCursor: null });
      expect(sent.names).toEqual(Array(INDEX_BUCKETS).fill('zrangebylex'));
    }
  });

  it('a page costs the bucket reads plus one read per session on the page (about one page of entries)', async () => {
    for (const filter of [
      {},
      { ownerId: 'owner-7' },
      { tenantId: 'tenant-1' },
      { agentName: 'agent-1' },
      { ownerId: 'owner-7', tenantId: 'tenant-3' },
      { ownerId: 'owner-6', agentName: 'agent-0' },
      { tenantId: 'tenant-1', agentName: 'agent-1' },
      { ownerId: 'owner-5', tenantId: 'tenant-1', agentName: 'agent-1' },
    ]) {
      sent.reset();
      const page = await store.listSessions({ ...filter, limit: 5 });
      expect(page.sessions).toHaveLength(5);
      expect(sent.names.filter((n) => n === 'zrangebylex')).toHaveLength(INDEX_BUCKETS);
      expect(sent.names.length).toBe(INDEX_BUCKETS + 6);
    }
  });

  it('every filter pages through exactly its sessions, in id order, with combined filters checked too', async () => {
    const expected = (pred: (i: number) => boolean) =>
      Array.from({ length: SESSIONS }, (_, i) => i)
        .filter(pred)
        .map(id);
    expect(await listAll({}, 37)).toEqual(expected(() => true));
    expect(await listAll({ ownerId: 'owner-7' }, 3)).toEqual(expected((i) => i % 40 === 7));
    expect(await listAll({ tenantId: 'tenant-2' }, 17)).toEqual(expected((i) => i % 4 === 2));
    expect(await listAll({ agentName: 'agent-1' }, 50)).toEqual(expected((i) => i % 2 === 1));
    expect(await listAll({ tenantId: 'tenant-3', agentName: 'agent-1' }, 7)).toEqual(
      expected((i) => i % 4 === 3 && i % 2 === 1),
    );
    expect(await listAll({ ownerId: 'owner-7', tenantId: 'tenant-3' }, 3)).toEqual(
      expected((i) => i % 40 === 7),
    );
    expect(await listAll({ ownerId: 'owner-8', agentName: 'agent-0' }, 4)).toEqual(
      expected((i) => i % 40 === 8),
    );
    expect(await listAll({ tenantId: 'tenant-2', agentName: 'agent-0' }, 9)).toEqual(
      expected((i) => i % 4 === 2),
    );
    expect(await listAll({ ownerId: 'owner-9', tenantId: 'tenant-1', agentName: 'agent-1' }, 2)).toEqual(
      expected((i) => i % 40 === 9),
    );
  });

  it('entries of sessions that expired are removed from the index a listing walks, not skipped forever', async () => {
    const gone = id(7); // owner-7, tenant-3, agent-1
    const keys = redisKeys(prefix, gone);
    await client.del(keys.session, keys.messages); // what TTL expiry does
    const before = await indexEntries(client, prefix, 'o', 'owner-7');
    expect((await listAll({ ownerId: 'owner-7' }, 4)).includes(gone)).toBe(false);
    expect(await indexEntries(client, prefix, 'o', 'owner-7')).toBe(before - 1);
    await listAll({}, 100);
    expect(await indexEntries(client, prefix)).toBe(SESSIONS - 1);
  });

  it('deleteSession and deleteIdleSessions take the session out of every index', async () => {
    await store.deleteSession(id(47)); // owner-7, tenant-3, agent-1
    expect(await indexEntries(client, prefix, 'o', 'owner-7')).toBe(SESSIONS / 40 - 2);
    expect(await indexEntries(client, prefix, 'otg', ['owner-7', 'tenant-3', 'agent-1'])).toBe(
      SESSIONS / 40 - 1,
    );
    const idleBefore = new Date(Date.now() + 1000).toISOString();
    const deleted: string[] = [];
    let cursor: string | null = null;
    do {
      sent.reset();
      const page: Awaited<ReturnType<RedisAgentStore['deleteIdleSessions']>> = await store.deleteIdleSessions(
        {
          idleBefore,
          limit: 64,
          cursor,
        },
      );
      // Bounded: a few reads of the activity index, then per candidate one script (which removes
      // the index entries of what it deletes), and for the one expired session a prune script.
      expect(sent.names.filter((n) => n === 'evalsha' || n === 'eval').length).toBeLessThanOrEqual(64 + 1);
      deleted.push(...page.deleted);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(deleted.sort()).toEqual(
      Array.from({ length: SESSIONS }, (_, i) => id(i)).filter((s) => s !== id(7) && s !== id(47)),
    );
    for (const kind of ['a', 'i'] as const) {
      const keys = kind === 'a' ? indexKeys(prefix).lex('a') : indexKeys(prefix).activity();
      const counts = await Promise.all(keys.map((key) => client.zcard(key)));
      // The expired session's activity entry was dropped by the sweep too.
      expect(counts.reduce((a, b) => a + b, 0)).toBe(0);
    }
    // The expired session's agent entry goes when a listing first walks that index.
    expect(await indexEntries(client, prefix, 'g', 'agent-1')).toBe(1);
    expect(await listAll({ agentName: 'agent-1' }, 10)).toEqual([]);
    expect(await indexEntries(client, prefix, 'g', 'agent-1')).toBe(0);
  });
});

it('reindex() moves sessions from the single index of earlier releases into the bucketed ones', async () => {
  const legacyPrefix = uniquePrefix('legacy');
  const legacy = redisStore({ client }, { keyPrefix: legacyPrefix, checkDurability: false });
  for (const name of ['x', 'y', 'z']) {
    await legacy.append(name, {
      expectedSeq: 0,
      messages: [msg()],
      session: { init: init({ ownerId: 'o1' }) },
      lease: null,
    });
  }
  // What an earlier release left: members in `<prefix>sessions` (the id's UTF-16 code units as
  // hex), none in the new indexes.
  const { indexMember } = await import('../src/keys.ts');
  const legacyMember = (id: string) => Buffer.from(id, 'utf16le').swap16().toString('hex');
  await client.zadd(
    `${legacyPrefix}sessions`,
    0,
    legacyMember('x'),
    0,
    legacyMember('y'),
    0,
    legacyMember('gone'),
  );
  for (const key of [...indexKeys(legacyPrefix).lex('a'), ...indexKeys(legacyPrefix).lex('o', 'o1')]) {
    await client.zrem(key, indexMember('x'), indexMember('y'));
  }
  expect((await legacy.listSessions({ ownerId: 'o1', limit: 10 })).sessions.map((s) => s.id)).toEqual(['z']);
  expect(await legacy.reindex()).toEqual({ reindexed: 2 });
  expect(await client.exists(`${legacyPrefix}sessions`)).toBe(0);
  expect((await legacy.listSessions({ ownerId: 'o1', limit: 10 })).sessions.map((s) => s.id)).toEqual([
    'x',
    'y',
    'z',
  ]);
  expect(await legacy.reindex()).toEqual({ reindexed: 0 });
});
