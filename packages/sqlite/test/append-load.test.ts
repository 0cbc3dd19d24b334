import {
  CorruptRecordError,
  InvalidArgumentError,
  LeaseLostError,
  type NewMessage,
  PayloadTooLargeError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
} from '@agentstore/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqliteStore, sqliteStore } from '../src/index.ts';
import { sqliteCapabilities } from '../src/testing/capabilities.ts';
import { init, messages, tempDatabaseDir } from './helpers.ts';

const dir = tempDatabaseDir();
let store: SqliteStore;
let caps: ReturnType<typeof sqliteCapabilities>;
let n = 0;
const freshId = () => `session-${++n}-${Math.random().toString(36).slice(2)}`;

beforeAll(() => {
  store = sqliteStore({ path: dir.file() });
  caps = sqliteCapabilities({ connection: { path: dir.file() } });
});
afterAll(async () => {
  caps.close();
  await store.close();
  dir.cleanup();
});

describe('append and load', () => {
  it('creates the session from init, round-trips every message field exactly, and replaces state', async () => {
    const id = freshId();
    const rich: NewMessage[] = [
      { id: 'u', role: 'user', content: 'hi "there"\n', createdAt: '2024-01-01T00:00:00.000Z' },
      {
        id: 'a',
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'send', input: { to: ['x'], n: 1.5, ok: true, none: null } }],
        createdAt: '2024-01-01T00:00:01.000Z',
      },
      {
        id: 't',
        role: 'tool',
        content: '{"done":true} 🚀',
        toolCallId: 'c1',
        toolName: 'send',
        kind: 'tool-error',
        createdAt: '2024-01-01T00:00:02.000Z',
      },
    ];
    expect(
      await store.append(id, { expectedSeq: 0, messages: rich, lease: null, session: { init: init() } }),
    ).toEqual({
      headSeq: 3,
    });
    const loaded = await store.load(id);
    expect(loaded?.messages).toStrictEqual(rich.map((m, i) => ({ ...m, seq: i + 1 })));
    expect(loaded?.session).toMatchObject({
      id,
      agentName: 'agent',
      ownerId: 'owner-1',
      state: { step: 0 },
      headSeq: 3,
    });

    await store.append(id, {
      expectedSeq: 3,
      messages: messages('b', 1),
      lease: null,
      session: { state: { step: 1 }, init: init({ ownerId: 'intruder' }) },
    });
    const after = await store.load(id, { afterSeq: 3 });
    expect(after?.messages.map((m) => m.seq)).toEqual([4]);
    expect(after?.session).toMatchObject({ ownerId: 'owner-1', state: { step: 1 }, headSeq: 4 });
    expect(await caps.raw?.messages(id)).toEqual([
      { seq: 1, id: 'u', role: 'user', content: 'hi "there"\n' },
      { seq: 2, id: 'a', role: 'assistant', content: '' },
      { seq: 3, id: 't', role: 'tool', content: '{"done":true} 🚀' },
      { seq: 4, id: 'b-0', role: 'assistant', content: 'b content 0' },
    ]);
  });

  it('rejects a stale expectedSeq with the stored head and writes nothing', async () => {
    const id = freshId();
    await store.append(id, { expectedSeq: 0, messages: messages('a', 2), lease: null });
    const error = await store
      .append(id, { expectedSeq: 1, messages: messages('b', 1), lease: null })
      .catch((e) => e);
    expect(error).toBeInstanceOf(SeqConflictError);
    expect(error).toMatchObject({ sessionId: id, expectedSeq: 1, actualSeq: 2 });
    await expect(
      store.append(freshId(), { expectedSeq: 3, messages: messages('c', 1), lease: null }),
    ).rejects.toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 0 });
    expect((await caps.raw?.messages(id))?.map((m) => m.id)).toEqual(['a-0', 'a-1']);
  });

  it('rolls the session update back when a message row already holds one of the seqs', async () => {
    const id = freshId();
    await store.append(id, {
      expectedSeq: 0,
      messages: messages('a', 1),
      lease: null,
      session: { init: init() },
    });
    // A stray row at seq 3 (as a foreign writer would leave): the guard passes, the primary key stops it.
    store.database
      .prepare(
        `INSERT INTO agentstore_messages (session_id, seq, id, role, message) VALUES (?, 3, 'x', 'user', '{}')`,
      )
      .run(id);
    const error = await store
      .append(id, { expectedSeq: 1, messages: messages('b', 3), lease: null, session: { state: 'changed' } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(SeqConflictError);
    expect(error).toMatchObject({ expectedSeq: 1, actualSeq: null });
    expect(await caps.raw?.session(id)).toMatchObject({ headSeq: 1 });
    expect((await caps.raw?.messages(id))?.map((m) => m.id)).toEqual(['a-0', 'x']);
    expect((await store.load(id, { afterSeq: 5 }))?.session.state).toEqual({ step: 0 });
  });

  it('enforces the lease: token must match, null needs no live lease, release lands with the append', async () => {
    const id = freshId();
    const { epoch } = await store.acquireLease(id, { holder: 'w1', ttlMs: 60_000, init: init() });
    expect(epoch).toBe(1);
    await expect(
      store.append(id, { expectedSeq: 0, messages: messages('a', 1), lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append(id, { expectedSeq: 0, messages: messages('a', 1), lease: { holder: 'w1', epoch: 2 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // Both wrong: the lost lease is reported, so a fenced writer always learns it was fenced.
    await expect(
      store.append(id, { expectedSeq: 7, messages: messages('a', 1), lease: { holder: 'w2', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append(id, { expectedSeq: 7, messages: messages('a', 1), lease: { holder: 'w1', epoch } }),
    ).rejects.toBeInstanceOf(SeqConflictError);
    await expect(store.acquireLease(id, { holder: 'w2', ttlMs: 1000, init: init() })).rejects.toBeInstanceOf(
      SessionBusyError,
    );
    await expect(
      store.acquireLease(id, { holder: 'w2', ttlMs: 1000, init: init({ tenantId: 'other' }) }),
    ).rejects.toBeInstanceOf(SessionAccessDeniedError);

    await store.append(id, {
      expectedSeq: 0,
      messages: messages('a', 2),
      lease: { holder: 'w1', epoch },
      releaseLease: true,
    });
    const loaded = await store.load(id);
    expect(loaded?.session.lease).toBeNull();
    expect(await caps.raw?.session(id)).toMatchObject({ headSeq: 2, leaseHolder: null, leaseEpoch: 1 });
    // Epochs never go back after a release.
    expect((await store.acquireLease(id, { holder: 'w2', ttlMs: 1000, init: init() })).epoch).toBe(2);
    expect(await store.releaseLease(id, { holder: 'w1', epoch: 1 })).toEqual({ released: false });
    const renewed = await store.renewLease(id, { holder: 'w2', epoch: 2, ttlMs: 5000 });
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.now());
    await expect(store.renewLease(id, { holder: 'w1', epoch: 1, ttlMs: 5000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await store.releaseLease(id, { holder: 'w2', epoch: 2 })).toEqual({ released: true });
  });

  it('lets a null-lease append through once the lease has expired', async () => {
    const id = freshId();
    await store.acquireLease(id, { holder: 'w1', ttlMs: 10, init: init() });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await store.append(id, { expectedSeq: 0, messages: messages('a', 1), lease: null })).toEqual({
      headSeq: 1,
    });
  });

  it('refuses a TTL whose expiry would pass year 9999 (or any above 24 h), before writing', async () => {
    const id = freshId();
    // 8,000 years: toISOString would write +010xxx-…, which sorts before 2026 as text.
    await expect(
      store.acquireLease(id, { holder: 'w1', ttlMs: 8000 * 365 * 86_400_000, init: init() }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await caps.raw?.session(id)).toBeNull();
    await store.acquireLease(id, { holder: 'w1', ttlMs: 86_400_000, init: init() });
    await expect(
      store.append(id, { expectedSeq: 0, messages: messages('a', 1), lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('accepts a message of exactly maxMessageBytes and the most messages per append', async () => {
    const id = freshId();
    const base: NewMessage = { id: 'big', role: 'tool', content: '', createdAt: '2024-01-01T00:00:00.000Z' };
    const overhead = JSON.stringify(base).length;
    const big = { ...base, content: 'é'.repeat(Math.floor((store.limits.maxMessageBytes - overhead) / 2)) };
    big.content += 'x'.repeat(store.limits.maxMessageBytes - overhead - big.content.length * 2);
    expect(Buffer.byteLength(JSON.stringify(big))).toBe(store.limits.maxMessageBytes);
    await store.append(id, { expectedSeq: 0, messages: [big], lease: null });
    expect((await store.load(id))?.messages[0]?.content).toBe(big.content);
    await expect(
      store.append(id, {
        expectedSeq: 1,
        messages: [{ ...big, id: 'bigger', content: `${big.content}x` }],
        lease: null,
      }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);

    const many = messages('m', store.limits.maxMessagesPerAppend);
    expect(await store.append(id, { expectedSeq: 1, messages: many, lease: null })).toEqual({
      headSeq: 1 + many.length,
    });
    const seqs = (await store.load(id, { afterSeq: 1 }))?.messages.map((m) => m.seq);
    expect(seqs).toEqual(many.map((_, i) => i + 2));
    await expect(
      store.append(id, {
        expectedSeq: 1 + many.length,
        messages: messages('n', many.length + 1),
        lease: null,
      }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('reports an undecodable message or session row as CorruptRecordError', async () => {
    const id = freshId();
    await store.append(id, { expectedSeq: 0, messages: messages('a', 3), lease: null });
    await caps.corrupt?.(id, 2);
    const error = await store.load(id).catch((e) => e);
    expect(error).toBeInstanceOf(CorruptRecordError);
    expect(error).toMatchObject({ sessionId: id, seq: 2 });
    expect((await store.load(id, { afterSeq: 2 }))?.messages.map((m) => m.seq)).toEqual([3]);
    store.database.prepare(`UPDATE agentstore_sessions SET state = '{' WHERE id = ?`).run(id);
    await expect(store.load(id, { afterSeq: 2 })).rejects.toMatchObject({
      code: 'CORRUPT_RECORD',
      seq: null,
    });
  });

  it('stores hostile session ids verbatim', async () => {
    const ids = [`'; DROP TABLE agentstore_sessions; --`, '100%_"{}"\n\t ', 'a\u2028b', '🚀'.repeat(200)];
    for (const id of ids) {
      await store.append(id, { expectedSeq: 0, messages: messages('h', 1), lease: null });
      expect((await store.load(id))?.session.id).toBe(id);
      expect((await caps.raw?.session(id))?.id).toBe(id);
    }
    expect(await store.deleteSession(ids[0]!)).toEqual({ deleted: true });
    expect(await store.load(ids[0]!)).toBeNull();
    expect(await caps.raw?.messages(ids[0]!)).toEqual([]);
    expect(await store.deleteSession(ids[0]!)).toEqual({ deleted: false });
  });

  it('lists sessions by filter, ordered by id, with a cursor', async () => {
    const tenant = `tenant-${freshId()}`;
    const ids = ['b', 'a', 'd', 'c', 'e'].map((x) => `${tenant}-${x}`);
    for (const [i, id] of ids.entries()) {
      await store.acquireLease(id, {
        holder: 'h',
        ttlMs: 1000,
        init: init({ tenantId: tenant, ownerId: i % 2 ? 'odd' : 'even', agentName: 'lister' }),
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.listSessions({ tenantId: tenant, limit: 2, cursor });
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...ids].sort());
    const even = await store.listSessions({
      tenantId: tenant,
      ownerId: 'even',
      agentName: 'lister',
      limit: 10,
    });
    expect(even.sessions.map((s) => s.id)).toEqual([ids[0], ids[2], ids[4]].sort());
    expect(even.nextCursor).toBeNull();
    await expect(store.listSessions({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
