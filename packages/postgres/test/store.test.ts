import {
  CorruptRecordError,
  InvalidArgumentError,
  LeaseLostError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
} from '@agentstore/core';
import { describe, expect, it } from 'vitest';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const pg = usePostgres('store');

const rawMessages = async (id: string) =>
  (
    await pg.pool.query<{ seq: string }>(
      `SELECT seq FROM "${pg.schema}".agentstore_messages WHERE session_id = $1`,
      [id],
    )
  ).rows.map((r) => Number(r.seq));

describe('append and load', () => {
  it('creates on the first append, assigns seqs and round-trips every field', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const first = message('m1', 'hello \u0000 NUL and "quotes" \\ and emoji 😀', {
      toolCalls: [{ id: 'c1', name: 'search', input: { q: 'x', n: [1, 2.5, { deep: null, t: true }] } }],
      kind: 'custom',
    });
    const second = message('m2', '', { role: 'tool', toolCallId: 'c1', toolName: 'search' });
    const result = await store.append(id, {
      expectedSeq: 0,
      messages: [first, second],
      session: { init: init({ ownerId: 'o', tenantId: 't' }), state: { step: 1, text: 'a\u0000b' } },
      lease: null,
    });
    expect(result).toEqual({ headSeq: 2 });
    const loaded = await store.load(id);
    expect(loaded?.messages).toEqual([
      { ...first, seq: 1 },
      { ...second, seq: 2 },
    ]);
    expect(loaded?.session).toMatchObject({
      id,
      agentName: 'agent',
      ownerId: 'o',
      tenantId: 't',
      state: { step: 1, text: 'a\u0000b' },
      headSeq: 2,
      lease: null,
    });
    expect(Object.keys(loaded!.messages[0]!)).not.toContain('toolCallId');
    expect((await store.load(id, { afterSeq: 1 }))?.messages.map((m) => m.id)).toEqual(['m2']);
    expect((await store.load(id, { afterSeq: 2 }))?.messages).toEqual([]);
    expect(await store.load(uniqueId('missing'))).toBeNull();
  });

  it('keeps the state unless one is given, and never changes owner or tenant', async () => {
    const store = await pg.store();
    const id = uniqueId();
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      session: { init: init({ ownerId: 'o1', tenantId: 't1' }) },
      lease: null,
    });
    expect((await store.load(id))?.session.state).toEqual({ step: 0 });
    await store.append(id, {
      expectedSeq: 1,
      messages: [message('b')],
      session: { init: init({ ownerId: 'o2', tenantId: 't2' }) },
      lease: null,
    });
    const loaded = (await store.load(id))!.session;
    expect(loaded).toMatchObject({ ownerId: 'o1', tenantId: 't1', state: { step: 0 }, headSeq: 2 });
    await store.append(id, {
      expectedSeq: 2,
      messages: [message('c')],
      session: { state: null },
      lease: null,
    });
    expect((await store.load(id))?.session.state).toBeNull();
  });

  it('refuses a stale expectedSeq with the actual head and writes nothing', async () => {
    const store = await pg.store();
    const id = uniqueId();
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      session: { init: init() },
      lease: null,
    });
    const stale = await store
      .append(id, { expectedSeq: 0, messages: [message('b')], lease: null })
      .catch((e) => e);
    expect(stale).toBeInstanceOf(SeqConflictError);
    expect(stale).toMatchObject({ sessionId: id, expectedSeq: 0, actualSeq: 1 });
    const ahead = await store
      .append(id, { expectedSeq: 5, messages: [message('c')], lease: null })
      .catch((e) => e);
    expect(ahead).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 1 });
    const missing = uniqueId();
    const none = await store
      .append(missing, { expectedSeq: 3, messages: [message('d')], lease: null })
      .catch((e) => e);
    expect(none).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 0 });
    expect(await rawMessages(id)).toEqual([1]);
    expect(await store.load(missing)).toBeNull();
  });

  it('rejects bad input before any write', async () => {
    const store = await pg.store();
    const id = uniqueId();
    await expect(store.append(id, { expectedSeq: 0, messages: [], lease: null })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message('x'), message('x')], lease: null }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(store.load('')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(store.load(id, { afterSeq: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await store.load(id)).toBeNull();
  });

  it('stores NUL inside messages and state, and refuses it before any write where a column would hold it', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const nul = message('id\u0000with nul', 'c\u0000', { toolCallId: 't\u0000', kind: '\u0000' });
    await store.append(id, {
      expectedSeq: 0,
      messages: [nul],
      session: { init: init(), state: ['\u0000'] },
      lease: null,
    });
    expect(await store.load(id)).toMatchObject({
      messages: [{ ...nul, seq: 1 }],
      session: { state: ['\u0000'] },
    });
    const fresh = uniqueId();
    await expect(
      store.append(fresh, {
        expectedSeq: 0,
        messages: [message('a')],
        session: { init: init({ ownerId: 'o\u0000' }) },
        lease: null,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'session.init.ownerId' });
    await expect(
      store.acquireLease(fresh, { holder: 'h\u0000', ttlMs: 1000, init: init() }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'holder' });
    expect(await store.load(fresh)).toBeNull();
    // A holder or owner that cannot be stored is refused by core's boundary, as on every store.
    await expect(store.renewLease(id, { holder: 'h\u0000', epoch: 1, ttlMs: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(store.releaseLease(id, { holder: 'h\u0000', epoch: 1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(store.listSessions({ ownerId: '\u0000', limit: 5 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('reports an undecodable message or session row as CorruptRecordError', async () => {
    const store = await pg.store();
    const id = uniqueId();
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a'), message('b')],
      session: { init: init() },
      lease: null,
    });
    const table = `"${pg.schema}".agentstore_messages`;
    await pg.pool.query(`UPDATE ${table} SET body = '{"id": broken' WHERE session_id = $1 AND seq = 2`, [id]);
    const error = await store.load(id).catch((e) => e);
    expect(error).toBeInstanceOf(CorruptRecordError);
    expect(error).toMatchObject({ sessionId: id, seq: 2 });
    expect((await store.load(id, { afterSeq: 2 }))?.messages).toEqual([]);
    await pg.pool.query(`UPDATE ${table} SET body = '[1,2]' WHERE session_id = $1 AND seq = 1`, [id]);
    await expect(store.load(id)).rejects.toMatchObject({ code: 'CORRUPT_RECORD', seq: 1 });
    await pg.pool.query(`UPDATE "${pg.schema}".agentstore_sessions SET state = 'nope' WHERE id = $1`, [id]);
    await expect(store.load(id)).rejects.toMatchObject({ code: 'CORRUPT_RECORD', seq: null });
  });
});

describe('leases', () => {
  it('grants, fences by epoch, renews and releases like the memory store', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const a = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: init({ ownerId: 'o' }) });
    expect(a.epoch).toBe(1);
    expect(a.session).toMatchObject({ id, headSeq: 0, ownerId: 'o', lease: { holder: 'A', epoch: 1 } });
    const busy = await store
      .acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init({ ownerId: 'o' }) })
      .catch((e) => e);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect(busy.retryAfterMs).toBeGreaterThan(0);
    await expect(
      store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init({ ownerId: 'other' }) }),
    ).rejects.toBeInstanceOf(SessionAccessDeniedError);
    await expect(
      store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: init({ ownerId: null }) }),
    ).rejects.toBeInstanceOf(SessionAccessDeniedError);
    // Without a token, a live lease blocks the append.
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message('x')], lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const again = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: init({ ownerId: 'o' }) });
    expect(again.epoch).toBe(2);
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message('x')], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(
      await store.append(id, { expectedSeq: 0, messages: [message('x')], lease: { holder: 'A', epoch: 2 } }),
    ).toEqual({ headSeq: 1 });
    await expect(store.renewLease(id, { holder: 'A', epoch: 1, ttlMs: 1000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    const renewed = await store.renewLease(id, { holder: 'A', epoch: 2, ttlMs: 120_000 });
    expect((await store.load(id))?.session.lease).toEqual({
      holder: 'A',
      epoch: 2,
      expiresAt: renewed.expiresAt,
    });
    expect(await store.releaseLease(id, { holder: 'A', epoch: 1 })).toEqual({ released: false });
    expect(await store.releaseLease(id, { holder: 'A', epoch: 2 })).toEqual({ released: true });
    expect(await store.releaseLease(id, { holder: 'A', epoch: 2 })).toEqual({ released: false });
    expect((await store.load(id))?.session.lease).toBeNull();
    await expect(store.renewLease(id, { holder: 'A', epoch: 2, ttlMs: 1000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    // Epochs never go back after a release.
    const b = await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init({ ownerId: 'o' }) });
    expect(b.epoch).toBe(3);
    expect(b.session.headSeq).toBe(1);
  });

  it('lets another holder take an expired lease, while the old holder keeps fenced-by-epoch rights until then', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const a = await store.acquireLease(id, { holder: 'A', ttlMs: 1, init: init() });
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Expired but not taken over: the token still appends.
    expect(
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('a')],
        lease: { holder: 'A', epoch: a.epoch },
      }),
    ).toEqual({ headSeq: 1 });
    const b = await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init: init() });
    expect(b.epoch).toBe(a.epoch + 1);
    await expect(
      store.append(id, { expectedSeq: 1, messages: [message('b')], lease: { holder: 'A', epoch: a.epoch } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('releases the lease in the same write as the last append', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const { epoch } = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: init() });
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('a')],
      lease: { holder: 'A', epoch },
      releaseLease: true,
    });
    expect((await store.load(id))?.session.lease).toBeNull();
    expect(await store.append(id, { expectedSeq: 1, messages: [message('b')], lease: null })).toEqual({
      headSeq: 2,
    });
    expect((await store.acquireLease(id, { holder: 'C', ttlMs: 1000, init: init() })).epoch).toBe(epoch + 1);
  });

  it('prefers SeqConflictError when both the seq and the lease are wrong, and a token on a missing session is lease lost', async () => {
    const store = await pg.store();
    const id = uniqueId();
    await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: init() });
    await expect(
      store.append(id, { expectedSeq: 4, messages: [message('a')], lease: { holder: 'Z', epoch: 9 } }),
    ).rejects.toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 0 });
    await expect(
      store.append(uniqueId(), {
        expectedSeq: 0,
        messages: [message('a')],
        lease: { holder: 'A', epoch: 1 },
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('grants exactly one of many concurrent acquires', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.acquireLease(id, { holder: `h${i}`, ttlMs: 60_000, init: init() }),
      ),
    );
    const granted = results.filter((r) => r.status === 'fulfilled');
    expect(granted).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(SessionBusyError);
    }
  });
});

describe('listSessions and deleteSession', () => {
  it('pages by id in byte order with filters and a cursor', async () => {
    const store = await pg.store();
    const tenant = uniqueId('tenant');
    const ids = ['b', 'B', 'a', 'a b', 'ä', 'Z', '\n', "'; DROP TABLE x; --"].map((s) => `${tenant}/${s}`);
    for (const [i, id] of ids.entries()) {
      await store.acquireLease(id, {
        holder: 'h',
        ttlMs: 1000,
        init: init({ tenantId: tenant, ownerId: i % 2 === 0 ? 'even' : 'odd', agentName: i < 4 ? 'x' : 'y' }),
      });
    }
    const sorted = [...ids].sort((p, q) => Buffer.compare(Buffer.from(p), Buffer.from(q)));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.listSessions({ tenantId: tenant, limit: 3, cursor });
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(sorted);
    const even = await store.listSessions({ tenantId: tenant, ownerId: 'even', limit: 100 });
    expect(even.sessions.map((s) => s.id)).toEqual(sorted.filter((id) => ids.indexOf(id) % 2 === 0));
    expect(even.nextCursor).toBeNull();
    const agentY = await store.listSessions({ tenantId: tenant, agentName: 'y', ownerId: 'odd', limit: 100 });
    expect(agentY.sessions.map((s) => s.id)).toEqual(
      sorted.filter((id) => ids.indexOf(id) % 2 === 1 && ids.indexOf(id) >= 4),
    );
    await expect(store.listSessions({ limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('deletes a session and its messages only', async () => {
    const store = await pg.store();
    const [keep, drop] = [uniqueId(), uniqueId()];
    for (const id of [keep, drop]) {
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('a'), message('b')],
        session: { init: init() },
        lease: null,
      });
    }
    expect(await store.deleteSession(drop)).toEqual({ deleted: true });
    expect(await store.deleteSession(drop)).toEqual({ deleted: false });
    expect(await store.load(drop)).toBeNull();
    expect(await rawMessages(drop)).toEqual([]);
    expect((await store.load(keep))?.messages).toHaveLength(2);
    // A deleted session starts afresh.
    expect(await store.append(drop, { expectedSeq: 0, messages: [message('c')], lease: null })).toEqual({
      headSeq: 1,
    });
  });

  it('ends only a pool it created', async () => {
    const { postgresStore } = await import('../src/index.ts');
    const borrowed = postgresStore({ pool: pg.pool }, { schema: pg.schema });
    await borrowed.close();
    expect((await pg.pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await expect(borrowed.load('x')).rejects.toBeInstanceOf(InvalidArgumentError);
    const owned = postgresStore({ connectionString: pg.url }, { schema: pg.schema });
    expect(await owned.load(uniqueId())).toBeNull();
    await owned.close();
    expect(owned.pool.ended).toBe(true);
  });
});
