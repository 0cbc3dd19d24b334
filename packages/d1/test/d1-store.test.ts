import {
  CorruptRecordError,
  InvalidArgumentError,
  isAgentStoreError,
  LeaseLostError,
  PayloadTooLargeError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionInit,
} from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkBodies } from '../src/append-batch.ts';
import {
  D1_STORE_LIMITS,
  type D1AgentStore,
  d1Store,
  SCHEMA_VERSION,
  SchemaVersionError,
  schemaStatements,
} from '../src/index.ts';
import { d1Corrupt, d1RawReader } from '../src/testing/capabilities.ts';
import { launchTestD1, message, uniqueId } from './launch.ts';

let server: Awaited<ReturnType<typeof launchTestD1>>;
let store: D1AgentStore;
const init: SessionInit = { agentName: 'agent', ownerId: 'owner-1', tenantId: 'tenant-1', state: { n: 0 } };

beforeAll(async () => {
  server = await launchTestD1();
  store = d1Store({ binding: server.db });
  await store.migrate();
});
afterAll(() => server?.stop());

const raw = () => d1RawReader(server.db, store.tables);

describe('migrate and table prefix', () => {
  it('a store whose tables were never migrated says exactly what to call', async () => {
    const fresh = d1Store({ binding: server.db }, { tablePrefix: `fresh${Date.now().toString(36)}_` });
    for (const attempt of [
      () => fresh.load('s'),
      () => fresh.acquireLease('s', { holder: 'h', ttlMs: 1000, init }),
      () => fresh.listSessions({ limit: 10, cursor: null }),
    ]) {
      const error = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentStoreError(error, 'SCHEMA_MISSING')).toBe(true);
      expect((error as Error).message).toContain('await store.migrate()');
    }
    await fresh.migrate();
    expect(await fresh.load('s')).toBeNull();
  });

  it('is idempotent and records the schema version', async () => {
    const other = d1Store({ binding: server.db }, { tablePrefix: 'mig_' });
    await expect(other.migrate()).resolves.toEqual({ version: SCHEMA_VERSION });
    await expect(other.migrate()).resolves.toEqual({ version: SCHEMA_VERSION });
    await Promise.all([other.migrate(), other.migrate()]);
    const { results } = await server.db.prepare('SELECT id, version FROM mig_schema_version').all();
    expect(results).toEqual([{ id: 1, version: SCHEMA_VERSION }]);
  });

  it('refuses tables migrated by a newer schema version', async () => {
    const newer = d1Store({ binding: server.db }, { tablePrefix: 'newer_' });
    await newer.migrate();
    await server.db.prepare('UPDATE newer_schema_version SET version = 99').all();
    await expect(newer.migrate()).rejects.toBeInstanceOf(SchemaVersionError);
  });

  it('keeps stores with different prefixes apart', async () => {
    const a = d1Store({ binding: server.db }, { tablePrefix: 'tenant_a_' });
    const b = d1Store({ binding: server.db }, { tablePrefix: 'tenant_b_' });
    await Promise.all([a.migrate(), b.migrate()]);
    await a.append('shared-id', {
      expectedSeq: 0,
      messages: [message('m1')],
      lease: null,
      session: { init },
    });
    expect(await b.load('shared-id')).toBeNull();
    expect((await a.load('shared-id'))?.messages).toHaveLength(1);
  });

  it.each([
    '',
    '1abc',
    '_cf_x',
    'sqlite_x',
    'SQLITE_x',
    'a-b',
    'a b',
    'x"; DROP TABLE y; --',
    'a'.repeat(49),
  ])('rejects the table prefix %j', (prefix) => {
    expect(() => d1Store({ binding: server.db }, { tablePrefix: prefix })).toThrow(InvalidArgumentError);
  });

  it('rejects something that is not a binding', () => {
    expect(() => d1Store({ binding: {} as never })).toThrow(InvalidArgumentError);
  });
});

describe('append and load', () => {
  it('creates the session from init and round-trips every message field exactly', async () => {
    const id = uniqueId('rt');
    const messages = [
      message('u1', { content: 'hello "quoted" \n\u0000 and emoji 😀' }),
      message('a1', {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'send', input: { to: ['x'], n: 1.5, nested: { ok: true, nil: null } } },
        ],
      }),
      message('t1', {
        role: 'tool',
        content: 'done',
        toolCallId: 'c1',
        toolName: 'send',
        kind: 'tool-error',
      }),
    ];
    await expect(
      store.append(id, { expectedSeq: 0, messages, lease: null, session: { init, state: { n: 1 } } }),
    ).resolves.toEqual({ headSeq: 3 });
    const loaded = await store.load(id);
    expect(loaded?.messages).toEqual(messages.map((m, i) => ({ ...m, seq: i + 1 })));
    expect(loaded?.messages[0]).not.toHaveProperty('toolCalls');
    expect(loaded?.session).toMatchObject({
      id,
      agentName: 'agent',
      ownerId: 'owner-1',
      tenantId: 'tenant-1',
      state: { n: 1 },
      headSeq: 3,
      lease: null,
    });
    expect((await store.load(id, { afterSeq: 2 }))?.messages.map((m) => m.id)).toEqual(['t1']);
    expect(await raw().messages(id)).toEqual(
      messages.map((m, i) => ({ seq: i + 1, id: m.id, role: m.role, content: m.content })),
    );
  });

  it('keeps owner and tenant of an existing session and replaces state only when given', async () => {
    const id = uniqueId('keep');
    await store.append(id, { expectedSeq: 0, messages: [message('1')], lease: null, session: { init } });
    await store.append(id, {
      expectedSeq: 1,
      messages: [message('2')],
      lease: null,
      session: { init: { ...init, ownerId: 'intruder' } },
    });
    expect((await store.load(id))?.session).toMatchObject({
      ownerId: 'owner-1',
      state: { n: 0 },
      headSeq: 2,
    });
    await store.append(id, {
      expectedSeq: 2,
      messages: [message('3')],
      lease: null,
      session: { state: null },
    });
    expect((await store.load(id))?.session.state).toBeNull();
  });

  it('throws SeqConflictError with the stored head and writes nothing', async () => {
    const id = uniqueId('conflict');
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('1'), message('2')],
      lease: null,
      session: { init },
    });
    const before = await raw().session(id);
    for (const expectedSeq of [0, 1, 3]) {
      const error = await store
        .append(id, { expectedSeq, messages: [message('x')], lease: null, session: { state: 'bad' } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SeqConflictError);
      expect(error).toMatchObject({ sessionId: id, expectedSeq, actualSeq: 2 });
    }
    expect(await raw().session(id)).toEqual(before);
    expect((await raw().messages(id)).map((m) => m.id)).toEqual(['1', '2']);
    expect((await store.load(id))?.session.state).toEqual({ n: 0 });
  });

  it('treats a missing session as head 0 and does not create it on a conflict', async () => {
    const id = uniqueId('missing');
    await expect(
      store.append(id, { expectedSeq: 4, messages: [message('1')], lease: null, session: { init } }),
    ).rejects.toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: 0 });
    expect(await raw().session(id)).toBeNull();
    expect(await raw().messages(id)).toEqual([]);
  });

  it('of racing appends at one head exactly one commits', async () => {
    const id = uniqueId('race');
    await store.append(id, { expectedSeq: 0, messages: [message('0')], lease: null, session: { init } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.append(id, { expectedSeq: 1, messages: [message(`w${i}a`), message(`w${i}b`)], lease: null }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(SeqConflictError);
    const rows = await raw().messages(id);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(rows[1]!.id.slice(0, -1)).toBe(rows[2]!.id.slice(0, -1));
  });

  it('spreads a 100-message append over several INSERTs in one batch, all or nothing', async () => {
    const id = uniqueId('many');
    const many = Array.from({ length: D1_STORE_LIMITS.maxMessagesPerAppend }, (_, i) => message(`m${i}`));
    expect(chunkBodies(many.map((m) => JSON.stringify(m))).length).toBeGreaterThan(1);
    await expect(
      store.append(id, { expectedSeq: 0, messages: many, lease: null, session: { init } }),
    ).resolves.toEqual({ headSeq: 100 });
    expect((await store.load(id))?.messages.map((m) => m.seq)).toEqual(many.map((_, i) => i + 1));

    // A row that collides in the LAST insert statement must undo the earlier ones and the head move.
    const collide = uniqueId('collide');
    await store.append(collide, {
      expectedSeq: 0,
      messages: [message('first')],
      lease: null,
      session: { init },
    });
    await server.db
      .prepare(
        `INSERT INTO ${store.tables.messages} (session_id, seq, id, role, message) VALUES (?, ?, ?, ?, ?)`,
      )
      .bind(
        collide,
        1 + D1_STORE_LIMITS.maxMessagesPerAppend,
        'stray',
        'user',
        JSON.stringify(message('stray')),
      )
      .all();
    const error = await store
      .append(collide, { expectedSeq: 1, messages: many, lease: null })
      .catch((e) => e);
    expect(error).toBeInstanceOf(SeqConflictError);
    expect(error).toMatchObject({ actualSeq: null });
    expect((await raw().messages(collide)).map((m) => m.seq)).toEqual([1, 101]);
    expect((await raw().session(collide))?.headSeq).toBe(1);
  });

  it('accepts a message of exactly maxMessageBytes and refuses one byte more before writing', async () => {
    const id = uniqueId('big');
    const base = message('big', { content: '' });
    const big = { ...base, content: 'é'.repeat(1000) };
    big.content += 'x'.repeat(D1_STORE_LIMITS.maxMessageBytes - messageByteLength(big));
    expect(messageByteLength(big)).toBe(D1_STORE_LIMITS.maxMessageBytes);
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('small'), big],
      lease: null,
      session: { init },
    });
    expect((await store.load(id))?.messages[1]).toEqual({ ...big, seq: 2 });

    const tooBig = { ...big, id: 'too-big', content: `${big.content}x` };
    await expect(
      store.append(id, { expectedSeq: 2, messages: [tooBig], lease: null }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect((await raw().session(id))?.headSeq).toBe(2);
  });

  it('splits INSERTs by bound parameters and by bytes', () => {
    // 100 bound parameters: session id and first seq, then id, role and message per row.
    expect(chunkBodies(Array.from({ length: 32 }, () => 'x')).map((c) => c.length)).toEqual([32]);
    expect(chunkBodies(Array.from({ length: 33 }, () => 'x')).map((c) => c.length)).toEqual([32, 1]);
    const half = 'x'.repeat(600_000);
    expect(chunkBodies([half, 'y', half, half]).map((c) => c.length)).toEqual([2, 1, 1]);
  });

  it('stores hostile session ids verbatim', async () => {
    const ids = [
      `'; DROP TABLE ${store.tables.sessions}; --`,
      '%_*?{}[]"\\\n\t ',
      'ü😀\u2028',
      'x'.repeat(1000),
      '?1 ?2',
    ];
    for (const id of ids) {
      await store.append(id, { expectedSeq: 0, messages: [message('1')], lease: null, session: { init } });
      expect((await store.load(id))?.session.id).toBe(id);
      expect((await raw().session(id))?.id).toBe(id);
    }
    for (const id of ids) await expect(store.deleteSession(id)).resolves.toEqual({ deleted: true });
  });
});

describe('leases', () => {
  it('grants, fences and tells busy from denied', async () => {
    const id = uniqueId('lease');
    const first = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init });
    expect(first.epoch).toBe(1);
    expect(first.session).toMatchObject({
      id,
      headSeq: 0,
      ownerId: 'owner-1',
      lease: { holder: 'A', epoch: 1 },
    });

    const busy = await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init }).catch((e) => e);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect(busy.retryAfterMs).toBeGreaterThan(50_000);
    const denied = store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init: { ...init, tenantId: null } });
    await expect(denied).rejects.toBeInstanceOf(SessionAccessDeniedError);
    expect((await raw().session(id))?.leaseEpoch).toBe(1);

    const again = await store.acquireLease(id, { holder: 'A', ttlMs: 60_000, init });
    expect(again.epoch).toBe(2);
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message('stale')], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store.append(id, { expectedSeq: 0, messages: [message('none')], lease: null }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // Both wrong: the stale lease wins.
    await expect(
      store.append(id, { expectedSeq: 5, messages: [message('x')], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await raw().messages(id)).toEqual([]);

    await store.append(id, {
      expectedSeq: 0,
      messages: [message('ok')],
      lease: { holder: 'A', epoch: 2 },
      releaseLease: true,
    });
    expect((await store.load(id))?.session.lease).toBeNull();
    expect((await raw().session(id))?.leaseEpoch).toBe(2);
    expect((await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init })).epoch).toBe(3);
  });

  it('lets an expired lease be taken over and still accepts the old holder until then', async () => {
    const id = uniqueId('expire');
    await store.acquireLease(id, { holder: 'A', ttlMs: 10, init });
    await new Promise((resolve) => setTimeout(resolve, 30));
    // Expired but not taken over: fencing is by epoch, so A may still append.
    await store.append(id, { expectedSeq: 0, messages: [message('a')], lease: { holder: 'A', epoch: 1 } });
    const taken = await store.acquireLease(id, { holder: 'B', ttlMs: 60_000, init });
    expect(taken.epoch).toBe(2);
    await expect(
      store.append(id, { expectedSeq: 1, messages: [message('late')], lease: { holder: 'A', epoch: 1 } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // No token is fine once nobody holds a live lease.
    await store.releaseLease(id, { holder: 'B', epoch: 2 });
    await expect(
      store.append(id, { expectedSeq: 1, messages: [message('free')], lease: null }),
    ).resolves.toEqual({
      headSeq: 2,
    });
  });

  it('renews and releases only for the current holder and epoch', async () => {
    const id = uniqueId('renew');
    const { epoch } = await store.acquireLease(id, { holder: 'A', ttlMs: 1_000, init });
    const renewed = await store.renewLease(id, { holder: 'A', epoch, ttlMs: 120_000 });
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.now() + 100_000);
    expect((await store.load(id))?.session.lease?.expiresAt).toBe(renewed.expiresAt);
    await expect(store.renewLease(id, { holder: 'B', epoch, ttlMs: 1_000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(
      store.renewLease(id, { holder: 'A', epoch: epoch + 1, ttlMs: 1_000 }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.releaseLease(id, { holder: 'B', epoch })).resolves.toEqual({ released: false });
    await expect(store.releaseLease(id, { holder: 'A', epoch })).resolves.toEqual({ released: true });
    await expect(store.releaseLease(id, { holder: 'A', epoch })).resolves.toEqual({ released: false });
    await expect(store.renewLease(id, { holder: 'A', epoch, ttlMs: 1_000 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(store.renewLease(id, { holder: 'A', epoch, ttlMs: 0 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('grants exactly one of racing acquires', async () => {
    const id = uniqueId('acq-race');
    const outcomes = await Promise.allSettled(
      ['A', 'B', 'C', 'D', 'E'].map((holder) => store.acquireLease(id, { holder, ttlMs: 60_000, init })),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(SessionBusyError);
  });
});

describe('list, delete, corrupt records, close', () => {
  it('lists by id with filters and a cursor', async () => {
    const tenantId = uniqueId('tenant');
    const ids = ['c', 'a', 'e', 'b', 'd'].map((s) => `${tenantId}/${s}`);
    for (const [i, id] of ids.entries()) {
      await store.acquireLease(id, {
        holder: 'h',
        ttlMs: 1_000,
        init: { ...init, tenantId, ownerId: i % 2 ? 'odd' : 'even' },
      });
    }
    const page1 = await store.listSessions({ tenantId, limit: 2 });
    expect(page1.sessions.map((s) => s.id)).toEqual([ids[1], ids[3]]);
    expect(page1.nextCursor).toBe(ids[3]);
    const page2 = await store.listSessions({ tenantId, limit: 2, cursor: page1.nextCursor });
    const page3 = await store.listSessions({ tenantId, limit: 2, cursor: page2.nextCursor });
    expect([...page2.sessions, ...page3.sessions].map((s) => s.id)).toEqual([ids[0], ids[4], ids[2]]);
    expect(page3.nextCursor).toBeNull();
    const odd = await store.listSessions({ tenantId, ownerId: 'odd', agentName: 'agent', limit: 10 });
    expect(odd.sessions.map((s) => s.id)).toEqual([ids[1], ids[3]]);
    expect((await store.listSessions({ tenantId, agentName: 'nope', limit: 10 })).sessions).toEqual([]);
    await expect(store.listSessions({ limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('deletes a session and only its messages', async () => {
    const [a, b] = [uniqueId('del'), uniqueId('keep')];
    for (const id of [a, b]) {
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('1'), message('2')],
        lease: null,
        session: { init },
      });
    }
    await expect(store.deleteSession(a)).resolves.toEqual({ deleted: true });
    await expect(store.deleteSession(a)).resolves.toEqual({ deleted: false });
    expect(await store.load(a)).toBeNull();
    expect(await raw().messages(a)).toEqual([]);
    expect((await store.load(b))?.messages).toHaveLength(2);
  });

  it('reports an undecodable message as CorruptRecordError naming session and seq', async () => {
    const id = uniqueId('corrupt');
    await store.append(id, {
      expectedSeq: 0,
      messages: [message('1'), message('2'), message('3')],
      lease: null,
      session: { init },
    });
    await d1Corrupt(server.db, store.tables)(id, 2);
    const error = await store.load(id).catch((e) => e);
    expect(error).toBeInstanceOf(CorruptRecordError);
    expect(error).toMatchObject({ sessionId: id, seq: 2 });
    expect((await store.load(id, { afterSeq: 2 }))?.messages.map((m) => m.id)).toEqual(['3']);

    await server.db
      .prepare(`UPDATE ${store.tables.messages} SET message = '{"id": 1}' WHERE session_id = ? AND seq = 3`)
      .bind(id)
      .all();
    await expect(store.load(id, { afterSeq: 2 })).rejects.toMatchObject({ code: 'CORRUPT_RECORD', seq: 3 });

    await server.db.prepare(`UPDATE ${store.tables.sessions} SET state = '{' WHERE id = ?`).bind(id).all();
    await expect(store.load(id, { afterSeq: 3 })).rejects.toMatchObject({
      code: 'CORRUPT_RECORD',
      seq: null,
    });
  });

  it('refuses calls after close without touching the binding', async () => {
    const own = d1Store({ binding: server.db });
    await own.close();
    await expect(own.load('x')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await store.listSessions({ limit: 1 })).toBeDefined();
  });
});

describe('schemaStatements', () => {
  it('applied by hand (as a wrangler migration would) leaves migrate() nothing to do', async () => {
    const statements = schemaStatements({ tablePrefix: 'wrangler_' });
    for (const sql of statements) {
      expect(sql).not.toContain(';');
      await server.db.prepare(sql).all();
    }
    const handMade = d1Store({ binding: server.db }, { tablePrefix: 'wrangler_' });
    await expect(handMade.migrate()).resolves.toEqual({ version: SCHEMA_VERSION });
    await handMade.append('s', { expectedSeq: 0, messages: [message('1')], lease: null, session: { init } });
    expect((await handMade.load('s'))?.session.headSeq).toBe(1);
  });
});
