import {
  CorruptRecordError,
  InvalidArgumentError,
  LeaseLostError,
  PayloadTooLargeError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
} from '@agentstore/core';
import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { redisCapabilities, redisKeys } from '../src/testing/capabilities.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

let server: LaunchedRedis;
let client: Redis;
let store: RedisAgentStore;
let prefix: string;
let caps: ReturnType<typeof redisCapabilities>;
beforeAll(async () => {
  server = await launchRedis();
  client = new Redis(server.info.url);
  prefix = uniquePrefix('store');
  store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
  caps = redisCapabilities(client, prefix);
});
afterAll(async () => {
  await store?.close();
  await client?.quit();
  await server?.stop();
});

describe('append', () => {
  it('round-trips every field, creates from init, replaces state, keeps owner', async () => {
    const first = msg({
      role: 'assistant',
      toolCalls: [{ id: 'c1', name: 'search', input: { q: 'ü', n: [1, null, { deep: true }] } }],
      kind: 'special',
    });
    await store.append('s1', {
      expectedSeq: 0,
      messages: [first],
      session: { init: init({ ownerId: 'o', tenantId: 't', state: { v: 0 } }), state: { v: 1 } },
      lease: null,
    });
    const tool = msg({ role: 'tool', toolCallId: 'c1', toolName: 'search', content: '"quoted"\n{}' });
    await store.append('s1', {
      expectedSeq: 1,
      messages: [tool],
      session: { init: init({ ownerId: 'other' }) },
      lease: null,
    });
    const loaded = await store.load('s1');
    expect(loaded?.messages).toEqual([
      { ...first, seq: 1 },
      { ...tool, seq: 2 },
    ]);
    expect(loaded?.messages[1]).not.toHaveProperty('toolCalls');
    expect(loaded?.session).toMatchObject({
      ownerId: 'o',
      tenantId: 't',
      state: { v: 1 },
      headSeq: 2,
      lease: null,
    });
    expect(await caps.raw.session('s1')).toEqual({
      id: 's1',
      headSeq: 2,
      ownerId: 'o',
      tenantId: 't',
      leaseHolder: null,
      leaseEpoch: 0,
    });
  });

  it('a wrong expectedSeq throws SeqConflictError with the stored head and writes nothing', async () => {
    await expect(
      store.append('s1', { expectedSeq: 1, messages: [msg()], lease: null }),
    ).rejects.toMatchObject({
      constructor: SeqConflictError,
      expectedSeq: 1,
      actualSeq: 2,
    });
    await expect(
      store.append('missing', { expectedSeq: 3, messages: [msg()], lease: null }),
    ).rejects.toMatchObject({
      actualSeq: 0,
    });
    expect(await caps.raw.messages('s1')).toHaveLength(2);
    expect(await store.load('missing')).toBeNull();
  });

  it('rejects bad input and oversize payloads before writing', async () => {
    await expect(store.append('', { expectedSeq: 0, messages: [msg()], lease: null })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    const huge = msg({ content: 'x'.repeat(store.limits.maxMessageBytes) });
    await expect(
      store.append('big', { expectedSeq: 0, messages: [huge], lease: null }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(await store.load('big')).toBeNull();
  });

  it('a message of exactly maxMessageBytes round-trips', async () => {
    const base = msg({ content: '' });
    const size = JSON.stringify(base).length;
    const exact = { ...base, content: 'y'.repeat(store.limits.maxMessageBytes - size) };
    await store.append('exact', { expectedSeq: 0, messages: [exact], lease: null });
    expect((await store.load('exact'))?.messages[0]).toEqual({ ...exact, seq: 1 });
  });
});

describe('leases', () => {
  it('acquire creates, bumps the epoch, and fences stale tokens; release keeps the epoch counter', async () => {
    const a = await store.acquireLease('l1', { holder: 'a', ttlMs: 60_000, init: init({ tenantId: 't' }) });
    expect(a.epoch).toBe(1);
    expect(a.session).toMatchObject({
      id: 'l1',
      headSeq: 0,
      tenantId: 't',
      lease: { holder: 'a', epoch: 1 },
    });
    await expect(
      store.acquireLease('l1', { holder: 'b', ttlMs: 60_000, init: init({ tenantId: 't' }) }),
    ).rejects.toBeInstanceOf(SessionBusyError);
    await expect(
      store.acquireLease('l1', { holder: 'a', ttlMs: 60_000, init: init({ tenantId: 'other' }) }),
    ).rejects.toBeInstanceOf(SessionAccessDeniedError);
    const again = await store.acquireLease('l1', {
      holder: 'a',
      ttlMs: 60_000,
      init: init({ tenantId: 't' }),
    });
    expect(again.epoch).toBe(2);
    await expect(
      store.append('l1', { expectedSeq: 0, messages: [msg()], lease: { holder: 'a', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append('l1', { expectedSeq: 0, messages: [msg()], lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.releaseLease('l1', { holder: 'a', epoch: 1 })).toEqual({ released: false });
    expect(await store.releaseLease('l1', { holder: 'a', epoch: 2 })).toEqual({ released: true });
    expect((await store.load('l1'))?.session.lease).toBeNull();
    expect(await caps.raw.session('l1')).toMatchObject({ leaseHolder: null, leaseEpoch: 2 });
    const b = await store.acquireLease('l1', { holder: 'b', ttlMs: 60_000, init: init({ tenantId: 't' }) });
    expect(b.epoch).toBe(3);
  });

  it('busy reports retryAfterMs from the client clock; an expired lease is taken over', async () => {
    await store.acquireLease('l2', { holder: 'a', ttlMs: 30_000, init: init() });
    const busy = await store
      .acquireLease('l2', { holder: 'b', ttlMs: 1000, init: init() })
      .catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect((busy as SessionBusyError).retryAfterMs).toBeGreaterThan(20_000);
    expect((busy as SessionBusyError).retryAfterMs).toBeLessThanOrEqual(30_000);
    // Expire it by hand (what the passage of time does), then take it over.
    await client.hset(redisKeys(prefix, 'l2').session, 'leaseExpiresMs', String(Date.now() - 1));
    const b = await store.acquireLease('l2', { holder: 'b', ttlMs: 1000, init: init() });
    expect(b.epoch).toBe(2);
    // The expired holder is fenced by epoch, not by time.
    await expect(store.renewLease('l2', { holder: 'a', epoch: 1, ttlMs: 1000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    const renewed = await store.renewLease('l2', { holder: 'b', epoch: 2, ttlMs: 60_000 });
    expect((await store.load('l2'))?.session.lease?.expiresAt).toBe(renewed.expiresAt);
  });

  it('an append can release the lease in the same write', async () => {
    const { epoch } = await store.acquireLease('l3', { holder: 'a', ttlMs: 60_000, init: init() });
    await store.append('l3', {
      expectedSeq: 0,
      messages: [msg()],
      lease: { holder: 'a', epoch },
      releaseLease: true,
    });
    expect((await store.load('l3'))?.session.lease).toBeNull();
    await store.append('l3', { expectedSeq: 1, messages: [msg()], lease: null });
  });
});

describe('corrupt records', () => {
  it('an undecodable message throws CorruptRecordError naming session and seq', async () => {
    await store.append('c1', { expectedSeq: 0, messages: [msg(), msg(), msg()], lease: null });
    await caps.corrupt('c1', 2);
    await expect(store.load('c1')).rejects.toMatchObject({
      constructor: CorruptRecordError,
      sessionId: 'c1',
      seq: 2,
    });
    expect((await store.load('c1', { afterSeq: 2 }))?.messages.map((m) => m.seq)).toEqual([3]);
  });

  it('a damaged session hash throws CorruptRecordError with seq null', async () => {
    await store.append('c2', { expectedSeq: 0, messages: [msg()], lease: null });
    await client.hset(redisKeys(prefix, 'c2').session, 'state', '{nope');
    await expect(store.load('c2')).rejects.toMatchObject({ constructor: CorruptRecordError, seq: null });
  });

  it('a missing message is reported, never skipped', async () => {
    await store.append('c3', { expectedSeq: 0, messages: [msg(), msg()], lease: null });
    await client.rpop(redisKeys(prefix, 'c3').messages);
    await expect(store.load('c3')).rejects.toMatchObject({ constructor: CorruptRecordError, seq: 2 });
  });
});

describe('listSessions and deleteSession', () => {
  it('filters by owner, tenant and agent, pages by id', async () => {
    const p = uniquePrefix('list');
    const listStore = redisStore({ client }, { keyPrefix: p, checkDurability: false });
    for (const [id, fields] of [
      ['b', { ownerId: 'o1', tenantId: 't1' }],
      ['a', { ownerId: 'o1', tenantId: 't2' }],
      ['d', { ownerId: 'o2', tenantId: 't1', agentName: 'other' }],
      ['c', { ownerId: 'o1', tenantId: 't1' }],
    ] as const) {
      await listStore.acquireLease(id, { holder: 'h', ttlMs: 1000, init: init(fields) });
    }
    const page1 = await listStore.listSessions({ ownerId: 'o1', limit: 2 });
    expect(page1.sessions.map((s) => s.id)).toEqual(['a', 'b']);
    expect(page1.nextCursor).toBe('b');
    const page2 = await listStore.listSessions({ ownerId: 'o1', limit: 2, cursor: page1.nextCursor });
    expect(page2).toMatchObject({ sessions: [{ id: 'c' }], nextCursor: null });
    expect((await listStore.listSessions({ tenantId: 't1', limit: 10 })).sessions.map((s) => s.id)).toEqual([
      'b',
      'c',
      'd',
    ]);
    expect(
      (await listStore.listSessions({ agentName: 'other', limit: 10 })).sessions.map((s) => s.id),
    ).toEqual(['d']);
    await expect(listStore.listSessions({ limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await listStore.deleteSession('c')).toEqual({ deleted: true });
    expect(await listStore.deleteSession('c')).toEqual({ deleted: false });
    expect((await listStore.listSessions({ ownerId: 'o1', limit: 10 })).sessions.map((s) => s.id)).toEqual([
      'a',
      'b',
    ]);
    await listStore.close();
  });
});

describe('lifecycle', () => {
  it('a store opened from a url quits its own client; a closed store refuses calls', async () => {
    const own = redisStore(
      { url: server.info.url },
      { keyPrefix: uniquePrefix('url'), checkDurability: false },
    );
    await own.append('u', { expectedSeq: 0, messages: [msg()], lease: null });
    await own.close();
    await expect(own.load('u')).rejects.toBeInstanceOf(InvalidArgumentError);
    // The caller's client stays open after its store closes.
    const shared = redisStore({ client }, { keyPrefix: uniquePrefix('shared'), checkDurability: false });
    await shared.close();
    expect(await client.ping()).toBe('PONG');
  });
});
