import {
  type AgentStore,
  canAcquireLease,
  expiryIso,
  InvalidArgumentError,
  LeaseLostError,
  type MessageRecord,
  ownerMatches,
  retryAfterMs,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionInit,
  type SessionRecord,
  type StoreLimits,
  snapshotInput,
  validateAcquireLeaseInput,
  validateAppendInput,
  validateListSessionsInput,
  validateLoadOptions,
  validateReleaseLeaseInput,
  validateRenewLeaseInput,
  validateSessionId,
} from '@agentstore/core';
import { type Database, SqliteError } from 'better-sqlite3';
import { openDatabase } from './open-database.ts';
import { DEFAULT_TABLE_PREFIX, type SqliteStoreOptions, type SqliteStoreTarget } from './options.ts';
import { decodeMessage, decodeSession, type SessionRow } from './rows.ts';
import { migrate, tableNames } from './schema.ts';
import {
  listStatementCache,
  MESSAGE_ROW_WIDTH,
  MESSAGE_ROWS_PER_INSERT,
  messageInserts,
  prepareStatements,
  type Statements,
} from './statements.ts';

export interface SqliteStore extends AgentStore {
  /** The connection the store runs on (yours when you passed `{ database }`). */
  readonly database: Database;
  /** Creates or upgrades the tables now; otherwise this happens on first use. Idempotent. */
  migrate(): Promise<{ version: number }>;
}

/**
 * 16 MiB per message: far under SQLite's 1e9-byte value limit and V8's string limit, large
 * enough for any tool output a model could read back. 1000 messages per append keeps one
 * transaction (and its WAL growth) bounded.
 */
export const SQLITE_LIMITS: StoreLimits = Object.freeze({
  maxMessageBytes: 16 * 1024 * 1024,
  maxMessagesPerAppend: 1000,
});

type AppendArgs = [
  sessionId: string,
  expectedSeq: number,
  rows: unknown[],
  stateJson: string | null,
  init: SessionInit | undefined,
  /** The state a new session starts with; only computed when expectedSeq is 0. */
  initialStateJson: string | null,
  lease: { holder: string; epoch: number } | null,
  release: 0 | 1,
  nowIso: string,
];

type AcquireArgs = [sessionId: string, holder: string, init: SessionInit, nowMs: number, ttlMs: number];

const isPrimaryKeyViolation = (error: unknown) =>
  error instanceof SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';

/**
 * An AgentStore on SQLite via better-sqlite3. Every write is one synchronous IMMEDIATE
 * transaction, so it is atomic against other connections and other processes on the same file.
 */
export function sqliteStore(target: SqliteStoreTarget, options: SqliteStoreOptions = {}): SqliteStore {
  if (typeof target !== 'object' || target === null || !('path' in target || 'database' in target)) {
    throw new InvalidArgumentError({ argument: 'target', reason: 'must be { path } or { database }' });
  }
  const tablePrefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  const tables = tableNames(tablePrefix);
  const { database: db, owned } = openDatabase(target, options);
  const limits = SQLITE_LIMITS;
  let closed = false;
  let prepared: Prepared | undefined;

  interface Prepared {
    s: Statements;
    list: ReturnType<typeof listStatementCache>;
    append: (...args: AppendArgs) => void;
    acquire: (...args: AcquireArgs) => { epoch: number; session: SessionRecord };
    load: (
      sessionId: string,
      afterSeq: number,
    ) => { session: SessionRecord; messages: MessageRecord[] } | null;
    remove: (sessionId: string) => boolean;
  }

  const prepare = (): Prepared => {
    migrate(db, { tablePrefix });
    const s = prepareStatements(db, tables);
    const insertRows = messageInserts(db, tables);

    const appendTx = db.transaction((...args: AppendArgs) => {
      const [sessionId, expectedSeq, rows, stateJson, init, initialStateJson, lease, release, nowIso] = args;
      const newHead = expectedSeq + rows.length / MESSAGE_ROW_WIDTH;
      const { changes } =
        lease === null
          ? s.appendWithoutLease.run(
              newHead,
              nowIso,
              stateJson,
              release,
              release,
              sessionId,
              expectedSeq,
              nowIso,
            )
          : s.appendWithLease.run(
              newHead,
              nowIso,
              stateJson,
              release,
              release,
              sessionId,
              expectedSeq,
              lease.holder,
              lease.epoch,
            );
      if (changes === 0) {
        // The guard failed or the session is new: only now is the head worth reading.
        const row = s.appendGuardFacts.get(sessionId);
        const actualSeq = row?.head_seq ?? 0;
        if (actualSeq !== expectedSeq) throw new SeqConflictError({ sessionId, expectedSeq, actualSeq });
        if (row !== undefined || lease !== null) {
          throw new LeaseLostError({ sessionId, holder: lease?.holder ?? null, epoch: lease?.epoch ?? null });
        }
        s.insertSession.run(
          sessionId,
          init?.agentName ?? '',
          init?.ownerId ?? null,
          init?.tenantId ?? null,
          initialStateJson ?? 'null',
          newHead,
          nowIso,
          nowIso,
        );
      }
      try {
        // `rows` holds MESSAGE_ROW_WIDTH bound values per message, built outside the lock.
        const total = rows.length / MESSAGE_ROW_WIDTH;
        if (total <= MESSAGE_ROWS_PER_INSERT) insertRows(total).run(rows);
        else {
          for (let first = 0; first < total; first += MESSAGE_ROWS_PER_INSERT) {
            const count = Math.min(MESSAGE_ROWS_PER_INSERT, total - first);
            const chunk = rows.slice(first * MESSAGE_ROW_WIDTH, (first + count) * MESSAGE_ROW_WIDTH);
            insertRows(count).run(chunk);
          }
        }
      } catch (error) {
        // A row already at one of these seqs: another writer got there; the rollback undoes ours.
        if (isPrimaryKeyViolation(error))
          throw new SeqConflictError({ sessionId, expectedSeq, actualSeq: null });
        throw error;
      }
    });

    const acquireTx = db.transaction((...args: AcquireArgs) => {
      const [sessionId, holder, init, nowMs, ttlMs] = args;
      const nowIso = new Date(nowMs).toISOString();
      const expiresAt = expiryIso(nowMs, ttlMs);
      const row = s.selectSession.get(sessionId);
      if (row === undefined) {
        const stateJson = JSON.stringify(init.state ?? null);
        s.insertSession.run(
          sessionId,
          init.agentName,
          init.ownerId ?? null,
          init.tenantId ?? null,
          stateJson,
          0,
          nowIso,
          nowIso,
        );
        s.grantLease.run(holder, 1, expiresAt, sessionId);
        return {
          epoch: 1,
          session: decodeSession({
            id: sessionId,
            agent_name: init.agentName,
            owner_id: init.ownerId ?? null,
            tenant_id: init.tenantId ?? null,
            state: stateJson,
            head_seq: 0,
            lease_holder: holder,
            lease_epoch: 1,
            lease_expires_at: expiresAt,
            created_at: nowIso,
            updated_at: nowIso,
          }),
        };
      }
      if (!ownerMatches({ ownerId: row.owner_id, tenantId: row.tenant_id }, init)) {
        throw new SessionAccessDeniedError({ sessionId });
      }
      const current = decodeSession(row);
      if (!canAcquireLease(current.lease, holder, nowMs)) {
        throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(current.lease!, nowMs) });
      }
      // The epoch column survives release, so every grant is higher than all earlier ones.
      const epoch = row.lease_epoch + 1;
      s.grantLease.run(holder, epoch, expiresAt, sessionId);
      return { epoch, session: { ...current, lease: { holder, epoch, expiresAt } } };
    });

    // One read transaction: the session and its messages come from the same snapshot.
    const loadTx = db.transaction((sessionId: string, afterSeq: number) => {
      const row = s.selectSession.get(sessionId);
      if (row === undefined) return null;
      const rows = s.selectMessages.all(sessionId, afterSeq);
      return { session: decodeSession(row), messages: rows.map((m) => decodeMessage(sessionId, m)) };
    });

    const deleteTx = db.transaction((sessionId: string) => {
      s.deleteMessages.run(sessionId);
      return s.deleteSession.run(sessionId).changes > 0;
    });

    return {
      s,
      list: listStatementCache(db, tables),
      append: (...args) => appendTx.immediate(...args),
      acquire: (...args) => acquireTx.immediate(...args),
      load: (sessionId, afterSeq) => loadTx.deferred(sessionId, afterSeq),
      remove: (sessionId) => deleteTx.immediate(sessionId),
    };
  };

  const ready = (): Prepared => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
    prepared ??= prepare();
    return prepared;
  };

  return {
    // An in-memory database dies with the process: `run()` must refuse it for durable sessions.
    durable: !db.memory,
    limits,
    database: db,

    async migrate() {
      if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
      const result = migrate(db, { tablePrefix });
      prepared ??= prepare();
      return result;
    },

    async load(sessionId, options = {}) {
      const p = ready();
      validateSessionId(sessionId);
      validateLoadOptions(options);
      const afterSeq = options.afterSeq ?? 0;
      return p.load(sessionId, afterSeq);
    },

    async append(sessionId, given) {
      // Validated and stored from one read of the caller's objects (getters, Proxies, toJSON).
      const input = snapshotInput(given);
      const p = ready();
      const encoded = validateAppendInput(sessionId, input, limits);
      const { messages, expectedSeq } = input;
      // Everything that can be computed outside the write lock is, so the transaction stays short.
      const rows = new Array<unknown>(messages.length * MESSAGE_ROW_WIDTH);
      for (let i = 0, at = 0; i < messages.length; i++) {
        const message = messages[i]!;
        rows[at++] = sessionId;
        rows[at++] = expectedSeq + 1 + i;
        rows[at++] = message.id;
        rows[at++] = message.role;
        rows[at++] = encoded[i];
      }
      const state = input.session?.state;
      const stateJson = state === undefined ? null : JSON.stringify(state);
      const init = input.session?.init;
      const nowIso = new Date().toISOString();
      p.append(
        sessionId,
        expectedSeq,
        rows,
        stateJson,
        init,
        expectedSeq === 0 ? (stateJson ?? JSON.stringify(init?.state ?? null)) : null,
        input.lease,
        input.releaseLease ? 1 : 0,
        nowIso,
      );
      return { headSeq: expectedSeq + messages.length };
    },

    async acquireLease(sessionId, given) {
      const { holder, ttlMs, init } = snapshotInput(given);
      validateAcquireLeaseInput(sessionId, { holder, ttlMs, init });
      const p = ready();
      return p.acquire(sessionId, holder, init, Date.now(), ttlMs);
    },

    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      validateRenewLeaseInput(sessionId, { holder, epoch, ttlMs });
      const p = ready();
      const expiresAt = expiryIso(Date.now(), ttlMs);
      if (p.s.renewLease.run(expiresAt, sessionId, holder, epoch).changes === 0) {
        throw new LeaseLostError({ sessionId, holder, epoch });
      }
      return { expiresAt };
    },

    async releaseLease(sessionId, { holder, epoch }) {
      validateReleaseLeaseInput(sessionId, { holder, epoch });
      const p = ready();
      return { released: p.s.releaseLease.run(sessionId, holder, epoch).changes > 0 };
    },

    async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
      validateListSessionsInput({ ownerId, tenantId, agentName, limit, cursor });
      const p = ready();
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new InvalidArgumentError({ argument: 'limit', reason: 'must be a positive integer' });
      }
      const params: unknown[] = [];
      if (ownerId !== undefined) params.push(ownerId);
      if (tenantId !== undefined) params.push(tenantId);
      if (agentName !== undefined) params.push(agentName);
      if (cursor != null) params.push(cursor);
      // One row more than the page tells whether another page exists.
      params.push(limit + 1);
      const rows: SessionRow[] = p.list({ ownerId, tenantId, agentName }, cursor != null).all(...params);
      const page = rows.slice(0, limit).map(decodeSession);
      return { sessions: page, nextCursor: rows.length > limit ? page[page.length - 1]!.id : null };
    },

    async deleteSession(sessionId) {
      validateSessionId(sessionId);
      const p = ready();
      return { deleted: p.remove(sessionId) };
    },

    async close() {
      if (closed) return;
      closed = true;
      if (owned) db.close();
    },
  };
}
