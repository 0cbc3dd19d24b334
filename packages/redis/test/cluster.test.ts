import { LeaseLostError, SeqConflictError, SessionBusyError } from '@agentstore/core';
import type { LaunchedServer, RedisClusterInfo } from '@agentstore/servers';
import { launchRedisCluster } from '@agentstore/servers';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { indexEntries, init, msg, uniquePrefix } from './helpers.ts';

let cluster: LaunchedServer<RedisClusterInfo>;
let client: Cluster;
let store: RedisAgentStore;
let prefix: string;
beforeAll(async () => {
  cluster = await launchRedisCluster();
  client = new Cluster(cluster.info.nodes);
  prefix = uniquePrefix('cluster');
  store = redisStore({ client }, { keyPrefix: prefix, ttlSeconds: 3600 });
  expect((await store.durabilityCheck).warnings).toEqual([]);
});
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await cluster?.stop();
});

const IDS = ['plain', '{a}', 'a}b{c', 'x'.repeat(1000), 'new\nline', 'é'.repeat(300), ':', '\uFFFD'];

it('runs on 3 masters, and a session’s keys share one slot', async () => {
  expect(client.nodes('master')).toHaveLength(3);
  for (const id of IDS) {
    const keys = redisKeys(prefix, id);
    const [a, b] = await Promise.all([
      client.call('CLUSTER', 'KEYSLOT', keys.session),
      client.call('CLUSTER', 'KEYSLOT', keys.messages),
    ]);
    expect(a).toBe(b);
  }
});

it('append and load work for ids spread across slots, creating sessions both ways', async () => {
  for (const [i, id] of IDS.entries()) {
    if (i % 2 === 0) {
      await store.append(id, { expectedSeq: 0, messages: [msg()], session: { init: init() }, lease: null });
    } else {
      const { epoch } = await store.acquireLease(id, { holder: 'w', ttlMs: 60_000, init: init() });
      await store.append(id, {
        expectedSeq: 0,
        messages: [msg()],
        lease: { holder: 'w', epoch },
        releaseLease: true,
      });
    }
    const { headSeq } = await store.append(id, { expectedSeq: 1, messages: [msg(), msg()], lease: null });
    expect(headSeq).toBe(3);
    const loaded = await store.load(id, { afterSeq: 1 });
    expect(loaded?.session.id).toBe(id);
    expect(loaded?.messages.map((m) => m.seq)).toEqual([2, 3]);
  }
  const slots = new Set(
    await Promise.all(IDS.map((id) => client.call('CLUSTER', 'KEYSLOT', redisKeys(prefix, id).session))),
  );
  expect(slots.size).toBeGreaterThan(1);
});

it('of concurrent appends at one expectedSeq exactly one commits; the rest get SeqConflictError', async () => {
  const id = 'race';
  await store.append(id, { expectedSeq: 0, messages: [msg()], session: { init: init() }, lease: null });
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, () =>
      store.append(id, { expectedSeq: 1, messages: [msg(), msg()], lease: null }),
    ),
  );
  const won = results.filter((r) => r.status === 'fulfilled');
  expect(won).toHaveLength(1);
  for (const r of results) {
    if (r.status === 'rejected') {
      expect(r.reason).toBeInstanceOf(SeqConflictError);
      expect((r.reason as SeqConflictError).actualSeq).toBe(3);
    }
  }
  expect((await store.load(id))?.messages).toHaveLength(3);
});

it('concurrent acquires of a fresh session: one holder wins, a stale epoch is fenced', async () => {
  const id = 'lease-race';
  const results = await Promise.allSettled(
    ['a', 'b', 'c', 'd'].map((holder) => store.acquireLease(id, { holder, ttlMs: 60_000, init: init() })),
  );
  const won = results.filter((r) => r.status === 'fulfilled');
  expect(won).toHaveLength(1);
  for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(SessionBusyError);
  const winner = (await store.load(id))!.session.lease!;
  await store.releaseLease(id, winner);
  const next = await store.acquireLease(id, { holder: 'z', ttlMs: 60_000, init: init() });
  expect(next.epoch).toBe(winner.epoch + 1);
  await expect(store.append(id, { expectedSeq: 0, messages: [msg()], lease: winner })).rejects.toBeInstanceOf(
    LeaseLostError,
  );
});

it('listSessions pages through the index slot; deleteSession removes a session and its entry', async () => {
  const all: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.listSessions({ limit: 3, cursor });
    all.push(...page.sessions.map((s) => s.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  expect(all).toEqual([...IDS, 'race', 'lease-race'].sort());

  expect(await store.deleteSession('{a}')).toEqual({ deleted: true });
  expect(await store.deleteSession('{a}')).toEqual({ deleted: false });
  expect(await store.load('{a}')).toBeNull();
  const after = await store.listSessions({ limit: 100 });
  expect(after.sessions.map((s) => s.id)).not.toContain('{a}');
  expect(await indexEntries(client, prefix)).toBe(all.length - 1);
});

/** ZADD calls the Cluster's masters have served so far (INFO commandstats, summed). */
async function zaddCalls(): Promise<number> {
  const infos = await Promise.all(client.nodes('master').map((node) => node.info('commandstats')));
  return infos.reduce((sum, info) => sum + Number(/cmdstat_zadd:calls=(\d+)/.exec(info)?.[1] ?? 0), 0);
}

it('creating a session adds each of its index entries once; deleting it removes every one', async () => {
  const fields = init({ ownerId: 'owner', tenantId: 'tenant' });
  const entries = 8 + 1; // all, g, o, t, og, tg, ot, otg + activity
  let before = await zaddCalls();
  await store.append('created', {
    expectedSeq: 0,
    messages: [msg()],
    session: { init: fields },
    lease: null,
  });
  expect((await zaddCalls()) - before).toBe(entries);
  before = await zaddCalls();
  await store.acquireLease('acquired', { holder: 'w', ttlMs: 60_000, init: fields });
  expect((await zaddCalls()) - before).toBe(entries);
  expect(
    (
      await store.listSessions({ ownerId: 'owner', tenantId: 'tenant', agentName: 'agent', limit: 10 })
    ).sessions.map((s) => s.id),
  ).toEqual(['acquired', 'created']);
  for (const id of ['created', 'acquired']) {
    expect(await store.deleteSession(id)).toEqual({ deleted: true });
    expect(await store.load(id)).toBeNull();
  }
  for (const [kind, values] of [
    ['o', 'owner'],
    ['t', 'tenant'],
    ['ot', ['owner', 'tenant']],
    ['og', ['owner', 'agent']],
    ['tg', ['tenant', 'agent']],
    ['otg', ['owner', 'tenant', 'agent']],
  ] as const) {
    expect(await indexEntries(client, prefix, kind, [...values])).toBe(0);
  }
});
