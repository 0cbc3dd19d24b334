import {
  type AgentStore,
  CorruptRecordError,
  LeaseLostError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
} from '@agentstore/core';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { dynamodbCapabilities, rawItems } from '../src/testing/capabilities.ts';
import { freshTable, init, message, sessionId, testClient, withSeq } from './support/dynamodb.ts';

const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let store: AgentStore;
let raw: ReturnType<typeof dynamodbCapabilities>['raw'];

beforeAll(async () => {
  table = await freshTable(client, 'store');
  store = dynamodbStore({ client, tableName: table.tableName });
  raw = dynamodbCapabilities(client, table.tableName).raw;
});
afterAll(async () => {
  await store?.close();
  await table?.drop();
  client.destroy();
});

describe('append and load', () => {
  it('creates the session at expectedSeq 0 and round-trips messages and state exactly', async () => {
    const id = sessionId();
    const first = [
      message('hi'),
      message('', {
        role: 'assistant',
        toolCalls: [{ id: 'c1', name: 'search', input: { q: 'x', n: [1, 2.5, null] } }],
        kind: 'step',
      }),
    ];
    const second = [message('result', { role: 'tool', toolCallId: 'c1', toolName: 'search' })];
    await store.append(id, {
      expectedSeq: 0,
      messages: first,
      lease: null,
      session: { init: init({ agentName: 'writer', ownerId: 'o1', state: { step: 0 } }) },
    });
    expect(
      await store.append(id, {
        expectedSeq: 2,
        messages: second,
        lease: null,
        session: { state: { step: 1 } },
      }),
    ).toEqual({
      headSeq: 3,
    });
    const loaded = await store.load(id);
    expect(loaded?.messages).toEqual(withSeq([...first, ...second]));
    expect(loaded?.messages[0]).not.toHaveProperty('toolCalls');
    expect(loaded?.session).toMatchObject({
      id,
      agentName: 'writer',
      ownerId: 'o1',
      tenantId: null,
      state: { step: 1 },
      headSeq: 3,
      lease: null,
    });
    expect((await store.load(id, { afterSeq: 2 }))?.messages).toEqual(withSeq(second, 3));
    expect(await raw.messages(id)).toHaveLength(3);
    expect(await store.load(sessionId())).toBeNull();
  });

  it('rejects a stale expectedSeq with the stored head and writes nothing', async () => {
    const id = sessionId();
    const batch = [message()];
    await store.append(id, { expectedSeq: 0, messages: batch, lease: null });
    // The same input again: a separate call, so a SeqConflictError as in every store.
    const again = store.append(id, { expectedSeq: 0, messages: batch, lease: null });
    await expect(again).rejects.toBeInstanceOf(SeqConflictError);
    await expect(again).rejects.toMatchObject({ sessionId: id, expectedSeq: 0, actualSeq: 1 });
    await expect(
      store.append(id, { expectedSeq: 5, messages: [message()], lease: null }),
    ).rejects.toMatchObject({
      actualSeq: 1,
    });
    await expect(
      store.append(sessionId(), { expectedSeq: 2, messages: [message()], lease: null }),
    ).rejects.toMatchObject({
      code: 'SEQ_CONFLICT',
      actualSeq: 0,
    });
    expect(await raw.messages(id)).toHaveLength(1);
  });

  it('reports an undecodable session item as CorruptRecordError with seq null', async () => {
    const id = sessionId();
    await store.append(id, { expectedSeq: 0, messages: [message()], lease: null });
    await dynamodbCapabilities(client, table.tableName).corrupt(id, 1);
    await expect(store.load(id)).rejects.toMatchObject({ code: 'CORRUPT_RECORD', sessionId: id, seq: 1 });
    const { UpdateItemCommand } = await import('@aws-sdk/client-dynamodb');
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'SET #s = :bad',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':bad': { S: '{nope' } },
      }),
    );
    const error = await store.load(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptRecordError);
    expect(error).toMatchObject({ seq: null });
  });
});

describe('leases', () => {
  it('grants, fences, tells busy from denied and never reuses an epoch', async () => {
    const id = sessionId();
    const owner = init({ ownerId: 'alice', tenantId: 't1' });
    const a = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: owner });
    expect(a.epoch).toBe(1);
    expect(a.session).toMatchObject({
      id,
      ownerId: 'alice',
      tenantId: 't1',
      headSeq: 0,
      lease: { holder: 'A', epoch: 1 },
    });

    const busy = await store
      .acquireLease(id, { holder: 'B', ttlMs: 60_000, init: owner })
      .catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect((busy as SessionBusyError).retryAfterMs).toBeGreaterThan(0);
    for (const other of [
      init({ ownerId: 'bob', tenantId: 't1' }),
      init({ ownerId: null, tenantId: 't1' }),
      init({ ownerId: 'alice' }),
    ]) {
      await expect(
        store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: other }),
      ).rejects.toBeInstanceOf(SessionAccessDeniedError);
    }

    // Appends need the exact token; without one, a live lease blocks them.
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message()], lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message()], lease: { holder: 'A', epoch: 2 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // Both checks failing: the lost lease wins, so a fenced writer always learns it was fenced.
    await expect(
      store.append(id, { expectedSeq: 3, messages: [message()], lease: { holder: 'X', epoch: 9 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append(id, { expectedSeq: 3, messages: [message()], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(SeqConflictError);
    await store.append(id, { expectedSeq: 0, messages: [message()], lease: { holder: 'A', epoch: 1 } });

    const renewed = await store.renewLease(id, { holder: 'A', epoch: 1, ttlMs: 120_000 });
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.now() + 60_000);
    await expect(store.renewLease(id, { holder: 'A', epoch: 7, ttlMs: 1000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(
      store.renewLease(sessionId(), { holder: 'A', epoch: 1, ttlMs: 1000 }),
    ).rejects.toBeInstanceOf(LeaseLostError);

    // Releasing inside the append, then a new holder: the epoch keeps counting.
    await store.append(id, {
      expectedSeq: 1,
      messages: [message()],
      lease: { holder: 'A', epoch: 1 },
      releaseLease: true,
    });
    expect((await store.load(id))?.session.lease).toBeNull();
    expect(await store.releaseLease(id, { holder: 'A', epoch: 1 })).toEqual({ released: false });
    const b = await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: owner });
    expect(b.epoch).toBe(2);
    expect(b.session.headSeq).toBe(2);
    expect(await store.releaseLease(id, { holder: 'B', epoch: 2 })).toEqual({ released: true });
    expect(await raw.session(id)).toMatchObject({ leaseHolder: null, leaseEpoch: 2, headSeq: 2 });
  });

  it('lets another process take a lease left unrenewed for its TTL (watched by that process) and fences the old holder', async () => {
    const id = sessionId();
    await store.acquireLease(id, { holder: 'A', ttlMs: 10, init: init() });
    // A store that has not seen this lease record before must watch it unchanged for its TTL.
    const other = dynamodbStore({ client, tableName: table.tableName });
    const early = await other.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init() }).catch((e) => e);
    expect(early).toBeInstanceOf(SessionBusyError);
    expect(early.retryAfterMs).toBe(10);
    // A slower machine only sleeps longer, and longer still satisfies the watch.
    await new Promise((resolve) => setTimeout(resolve, early.retryAfterMs + 20));
    const b = await other.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init() });
    expect(b.epoch).toBe(2);
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message()], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await other.close();
  });

  it('lets exactly one of many racing acquires win', async () => {
    const id = sessionId();
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        store.acquireLease(id, { holder: `h${i}`, ttlMs: 60_000, init: init() }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(SessionBusyError);
  });
});

describe('listing and deleting', () => {
  it('lists by id with filters and a cursor', async () => {
    const tenant = `tenant-${Math.random()}`;
    const ids = ['b', 'a', 'd', 'c', 'e'].map((x) => `${tenant}/${x}`);
    for (const [i, id] of ids.entries()) {
      await store.acquireLease(id, {
        holder: 'h',
        ttlMs: 1000,
        init: init({ tenantId: tenant, ownerId: i % 2 ? 'odd' : 'even' }),
      });
    }
    const first = await store.listSessions({ tenantId: tenant, limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual([`${tenant}/a`, `${tenant}/b`]);
    expect(first.nextCursor).toBe(`${tenant}/b`);
    const rest = await store.listSessions({ tenantId: tenant, limit: 5, cursor: first.nextCursor });
    expect(rest.sessions.map((s) => s.id)).toEqual([`${tenant}/c`, `${tenant}/d`, `${tenant}/e`]);
    expect(rest.nextCursor).toBeNull();
    const even = await store.listSessions({
      tenantId: tenant,
      ownerId: 'even',
      agentName: 'agent',
      limit: 10,
    });
    expect(even.sessions.map((s) => s.id)).toEqual([`${tenant}/b`, `${tenant}/d`, `${tenant}/e`]);
    expect(even.sessions[0]).toMatchObject({ tenantId: tenant, ownerId: 'even', lease: { holder: 'h' } });
    expect((await store.listSessions({ tenantId: tenant, agentName: 'other', limit: 10 })).sessions).toEqual(
      [],
    );
  });

  it('deletes the session and every item of it, chunks included', async () => {
    const id = sessionId();
    await store.append(id, {
      expectedSeq: 0,
      messages: [message(), message('x'.repeat(500_000))],
      lease: null,
    });
    expect((await rawItems(client, table.tableName, id)).length).toBe(4);
    expect(await store.deleteSession(id)).toEqual({ deleted: true });
    expect(await rawItems(client, table.tableName, id)).toEqual([]);
    expect(await store.load(id)).toBeNull();
    expect(await store.deleteSession(id)).toEqual({ deleted: false });
    await store.append(id, { expectedSeq: 0, messages: [message()], lease: null });
    expect((await store.load(id))?.session.headSeq).toBe(1);
  });

  it('stores hostile session ids verbatim', async () => {
    const ids = [
      `quote"'\`${Math.random()}`,
      `%s {x} ${Math.random()}\n`,
      `'; DROP TABLE x; -- ${Math.random()}`,
      `é😀${'z'.repeat(1000)}`,
    ];
    for (const id of ids) {
      await store.append(id, { expectedSeq: 0, messages: [message(id)], lease: null });
      const loaded = await store.load(id);
      expect(loaded?.session.id).toBe(id);
      expect(loaded?.messages[0]?.content).toBe(id);
      expect((await raw.session(id))?.id).toBe(id);
    }
  });
});

describe('client ownership', () => {
  it('close() leaves a passed-in client usable and makes the store refuse calls', async () => {
    const own = dynamodbStore({ client, tableName: table.tableName });
    await own.close();
    await expect(own.load('x')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table.tableName, Key: { pk: { S: 'none' }, sk: { S: 'session' } } }),
    );
    expect(Item).toBeUndefined();
  });

  it('with ttlSeconds stamps the session item only (at appends and lease writes), never a message item', async () => {
    const ttlStore = dynamodbStore({ client, tableName: table.tableName, ttlSeconds: 3600 });
    const id = sessionId();
    const start = Math.floor(Date.now() / 1000);
    await ttlStore.append(id, {
      expectedSeq: 0,
      messages: [message(), message('y'.repeat(400_000))],
      lease: null,
    });
    const items = await rawItems(client, table.tableName, id);
    expect(items).toHaveLength(4);
    for (const item of items) {
      if (item.sk?.S !== 'session') {
        // A message item's TTL would start when it was written: the oldest would expire first.
        expect(item.ttl).toBeUndefined();
        continue;
      }
      expect(Number(item.ttl?.N)).toBeGreaterThanOrEqual(start + 3600);
      expect(Number(item.ttl?.N)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);
    }
    await ttlStore.acquireLease(id, { holder: 'h', ttlMs: 1000, init: init() });
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table.tableName, Key: { pk: { S: id }, sk: { S: 'session' } } }),
    );
    expect(Number(Item?.ttl?.N)).toBeGreaterThanOrEqual(start + 3600);
    await ttlStore.close();
  });

  it('validates the table name and ttlSeconds', () => {
    expect(() => dynamodbStore({ client, tableName: 'bad name!' })).toThrow(/tableName/);
    for (const maxClockSkewMs of [-1, 1.5, 86_400_001, Number.NaN]) {
      expect(() => dynamodbStore({ client, tableName: 'ok-name', maxClockSkewMs })).toThrow(/maxClockSkewMs/);
    }
    expect(dynamodbStore({ client, tableName: 'ok-name' }).maxClockSkewMs).toBe(5_000);
    expect(() => dynamodbStore({ client, tableName: 'ok-name', ttlSeconds: 0 })).toThrow(/ttlSeconds/);
  });
});
