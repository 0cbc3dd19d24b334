import {
  type LaunchedRedis,
  type LaunchedRedisCluster,
  launchRedis,
  launchRedisCluster,
} from '@agentstore/servers';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { indexKeys } from '../src/indexes.ts';
import { indexMember, keySpace } from '../src/keys.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

/*
 * Index entries are added once, when a session is created. Whatever removes them (deleteSession,
 * retention, a prune of an entry whose session is gone) may race a re-creation of the same id:
 * the re-creation's ZADDs find the entries still there (a no-op), and a ZREM landing after them
 * must not leave the new, live session out of every listing and out of the activity index (so
 * out of retention) for good. The competing step is injected between the store's round trips by
 * holding its first ZREM until the re-creation is done: no sleeps, no timing luck (issue #19).
 */
let server: LaunchedRedis;
let cluster: LaunchedRedisCluster;
beforeAll(async () => {
  [server, cluster] = await Promise.all([launchRedis(), launchRedisCluster({ masters: 3, replicas: 0 })]);
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await cluster?.stop();
});

const fields = init({ agentName: 'ag', ownerId: 'o:{x}', tenantId: 't😀' });
/** Every listing the session must appear in: no filter, and each combination of its values. */
const filters = [
  {},
  { ownerId: 'o:{x}' },
  { tenantId: 't😀' },
  { agentName: 'ag' },
  { ownerId: 'o:{x}', tenantId: 't😀' },
  { ownerId: 'o:{x}', agentName: 'ag' },
  { tenantId: 't😀', agentName: 'ag' },
  { ownerId: 'o:{x}', tenantId: 't😀', agentName: 'ag' },
];

/**
 * Runs `between` once the client's first call of `method` (a store script) has answered, before
 * the store takes its next step. The store looks its commands up on the client at each call.
 */
function afterFirstCall(client: Redis | Cluster, method: string, between: () => Promise<unknown>) {
  const methods = client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  if (typeof methods[method] !== 'function') throw new Error(`the store defines no ${method}`);
  const original = methods[method].bind(client);
  let calls = 0;
  methods[method] = async (...args: unknown[]) => {
    const reply = await original(...args);
    if (calls++ === 0) await between();
    return reply;
  };
}

/** Counts the client's own ZREM commands (a script's ZREMs run on the server, not counted). */
function countZrems(client: Redis): { count: number } {
  const counter = { count: 0 };
  const original = client.zrem.bind(client) as (...a: unknown[]) => Promise<number>;
  (client as unknown as { zrem: unknown }).zrem = (...args: unknown[]) => {
    counter.count += 1;
    return original(...args);
  };
  return counter;
}

/** The store's scripts (script-runner.ts), by the names they are defined under on the client. */
const RETAIN = 'agentstoreRetainV2';
const DELETE = 'agentstoreDeleteV2';

const recreate = (store: RedisAgentStore, id: string) =>
  store.append(id, {
    expectedSeq: 0,
    messages: [msg({ content: 'new' })],
    session: { init: fields },
    lease: null,
  });

/** What a user of the re-created session relies on: it loads, every listing has it, retention finds it. */
async function expectListedAndSwept(
  store: RedisAgentStore,
  client: Redis | Cluster,
  prefix: string,
  id: string,
) {
  expect((await store.load(id))?.messages.map((m) => m.content)).toEqual(['new']);
  const missingFrom: string[] = [];
  for (const filter of filters) {
    const { sessions } = await store.listSessions({ ...filter, limit: 100 });
    if (!sessions.some((s) => s.id === id)) missingFrom.push(JSON.stringify(filter));
  }
  const activity = await client.zscore(indexKeys(prefix).activityKey(id), indexMember(id));
  expect({ missingFrom, inActivityIndex: activity !== null }).toEqual({
    missingFrom: [],
    inActivityIndex: true,
  });
  // Once idle, a sweep deletes it: the activity entry still leads retention to it.
  const later = new Date(Date.now() + 60_000).toISOString();
  expect((await store.deleteIdleSessions({ idleBefore: later, limit: 100 })).deleted).toEqual([id]);
  expect(await store.load(id)).toBeNull();
}

function clusterClient(): Cluster {
  const client = new Cluster(cluster.info.nodes, { maxRedirections: 64 });
  client.on('error', () => {});
  return client;
}

async function withStores(
  makeClient: () => Redis | Cluster,
  label: string,
  body: (s: {
    prefix: string;
    writer: RedisAgentStore;
    writerClient: Redis | Cluster;
    other: Redis | Cluster;
  }) => Promise<void>,
) {
  const prefix = uniquePrefix(label);
  const writerClient = makeClient();
  const other = makeClient();
  const writer = redisStore({ client: writerClient }, { keyPrefix: prefix, checkDurability: false });
  try {
    await body({ prefix, writer, writerClient, other });
  } finally {
    await writer.close();
    writerClient.disconnect();
    other.disconnect();
  }
}

/** Retention deletes an idle session; the same id is re-created before its index clean-up lands. */
async function retentionRacingRecreate(makeClient: () => Redis | Cluster, label: string) {
  await withStores(makeClient, label, async ({ prefix, writer, writerClient, other }) => {
    const id = `sess-${label}`;
    await writer.append(id, { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
    const sweeper = redisStore({ client: other }, { keyPrefix: prefix, checkDurability: false });
    afterFirstCall(other, RETAIN, () => recreate(writer, id));
    // After the first append, before the re-creation: the re-created session is not idle.
    const idleBefore = new Date(Date.now() + 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect((await sweeper.deleteIdleSessions({ idleBefore, limit: 10 })).deleted).toEqual([id]);
    await expectListedAndSwept(writer, writerClient, prefix, id);
  });
}

/** deleteSession deletes a session; the same id is re-created before its index clean-up lands. */
async function deleteRacingRecreate(makeClient: () => Redis | Cluster, label: string) {
  await withStores(makeClient, label, async ({ prefix, writer, writerClient, other }) => {
    const id = `sess-${label}`;
    await writer.append(id, { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
    const deleter = redisStore({ client: other }, { keyPrefix: prefix, checkDurability: false });
    afterFirstCall(other, DELETE, () => recreate(writer, id));
    expect(await deleter.deleteSession(id)).toEqual({ deleted: true });
    await expectListedAndSwept(writer, writerClient, prefix, id);
  });
}

/**
 * Retention meets the activity entry of a session that expired (TTL: its keys are gone, the
 * entries stay); the id is re-created before retention's removal of that entry lands.
 */
async function expiredEntryRacingRecreate(makeClient: () => Redis | Cluster, label: string) {
  await withStores(makeClient, label, async ({ prefix, writer, writerClient, other }) => {
    const id = `sess-${label}`;
    await writer.append(id, { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
    const k = keySpace(prefix).session(id);
    await writerClient.del(k.session);
    await writerClient.del(k.messages);
    const sweeper = redisStore({ client: other }, { keyPrefix: prefix, checkDurability: false });
    afterFirstCall(other, RETAIN, () => recreate(writer, id));
    // After the first append, before the re-creation: the re-created session is not idle.
    const idleBefore = new Date(Date.now() + 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect((await sweeper.deleteIdleSessions({ idleBefore, limit: 10 })).deleted).toEqual([]);
    await expectListedAndSwept(writer, writerClient, prefix, id);
  });
}

describe('standalone', () => {
  const client = () => new Redis(server.info.url);

  it('retention racing a re-creation of the id never leaves the new session unlisted', async () => {
    await retentionRacingRecreate(client, 'ret-standalone');
  });

  it('retention meeting an expired session racing its re-creation keeps the new one in the activity index', async () => {
    await expiredEntryRacingRecreate(client, 'expired-standalone');
  });

  it('deleteSession and retention remove index entries inside their one script: no ZREM of their own, no window', async () => {
    const c = new Redis(server.info.url);
    const zrems = countZrems(c);
    const prefix = uniquePrefix('one-script');
    const store = redisStore({ client: c }, { keyPrefix: prefix, checkDurability: false });
    try {
      for (const id of ['deleted', 'idle', 'expired']) {
        await store.append(id, { expectedSeq: 0, messages: [msg()], session: { init: fields }, lease: null });
      }
      await c.del(keySpace(prefix).session('expired').session);
      expect(await store.deleteSession('deleted')).toEqual({ deleted: true });
      const later = new Date(Date.now() + 60_000).toISOString();
      // 'expired' is met too: its activity entry goes through the prune script.
      expect((await store.deleteIdleSessions({ idleBefore: later, limit: 10 })).deleted).toEqual(['idle']);
      expect(zrems.count).toBe(0);
      const ix = indexKeys(prefix);
      const left: string[] = [];
      for (const id of ['deleted', 'idle']) {
        for (const key of [...ix.memberships(id, fields), ix.activityKey(id)]) {
          if ((await c.zscore(key, indexMember(id))) !== null) left.push(`${id} in ${key}`);
        }
      }
      if ((await c.zscore(ix.activityKey('expired'), indexMember('expired'))) !== null) left.push('expired');
      expect(left).toEqual([]);
    } finally {
      await store.close();
      c.disconnect();
    }
  });
});

describe('Cluster (3 masters)', () => {
  it('retention racing a re-creation of the id never leaves the new session unlisted', async () => {
    await retentionRacingRecreate(clusterClient, 'ret-cluster');
  }, 60_000);

  it('deleteSession racing a re-creation of the id never leaves the new session unlisted', async () => {
    await deleteRacingRecreate(clusterClient, 'del-cluster');
  }, 60_000);

  it('retention meeting an expired session racing its re-creation keeps the new one in the activity index', async () => {
    await expiredEntryRacingRecreate(clusterClient, 'expired-cluster');
  }, 60_000);
});
