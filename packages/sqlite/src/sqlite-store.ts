import {
  type AgentStore,
  type DeleteIdleSessionsResult,
  InvalidArgumentError,
  LeaseLostError,
  type MessageRecord,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionInit,
  type SessionRecord,
  type StoreLimits,
} from '@agentstore/core';
import {
  appendLeaseMatches,
  canAcquireLease,
  decodeRetentionCursor,
  defineStore,
  encodeRetentionCursor,
  expiryIso,
  leaseFromColumns,
  newIncarnationId,
  ownerMatches,
  type RetentionRequest,
  retryAfterMs,
} from '@agentstore/core/store';
import {
  decodeSqliteMessage,
  decodeSqliteSession,
  type SqliteSessionRow,
  sqliteTableNames,
} from '@agentstore/sqlite-dialect';
import { type Database, SqliteError } from 'better-sqlite3';
import { openDatabase } from './open-database.ts';
import { DEFAULT_TABLE_PREFIX, type SqliteStoreOptions, type SqliteStoreTarget } from './options.ts';
import { migrate } from './schema.ts';
import {
  type AppendParams,
  listStatementCache,
  MESSAGE_ROWS_PER_INSERT,
  type MessageInsertParams,
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

/** One append as the write transaction takes it: named guard parameters and the message rows. */
interface AppendArgs {
  guard: AppendParams;
  /** INSERT parameters, one entry per statement of at most MESSAGE_ROWS_PER_INSERT rows. */
  inserts: { rows: number; params: MessageInsertParams }[];
  init: SessionInit | undefined;
  /** The state a new session starts with; only computed when expectedSeq is 0. */
  initialState: string | null;
}

type AcquireArgs = [sessionId: string, holder: string, init: SessionInit, ttlMs: number];

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
  const tables = sqliteTableNames(tablePrefix);
  const { database: db, owned } = openDatabase(target, options);
  const limits = SQLITE_LIMITS;
  let closed = false;
  let prepared: Prepared | undefined;

  interface Prepared {
    s: Statements;
    list: ReturnType<typeof listStatementCache>;
    append: (args: AppendArgs) => void;
    acquire: (...args: AcquireArgs) => { epoch: number; session: SessionRecord };
    load: (
      sessionId: string,
      afterSeq: number,
    ) => { session: SessionRecord; messages: MessageRecord[] } | null;
    remove: (sessionId: string) => boolean;
    removeIdle: (request: RetentionRequest) => DeleteIdleSessionsResult;
  }

  const prepare = (): Prepared => {
    migrate(db, { tablePrefix });
    const s = prepareStatements(db, tables);
    const insertRows = messageInserts(db, tables);
    // Leases are granted and judged by the database's clock (read inside each transaction).
    const dbNowMs = () => s.clock.get()!.now;

    const appendTx = db.transaction(({ guard, inserts, init, initialState }: AppendArgs) => {
      const { sessionId, expectedSeq, holder, epoch } = guard;
      // A lease-less append asks whether a lease is live by the database's clock, inside its UPDATE.
      const { changes } = holder === null ? s.appendWithoutLease.run(guard) : s.appendWithLease.run(guard);
      if (changes === 0) {
        // The guard failed or the session is new: only now is the row (and the clock) worth reading.
        const row = s.appendGuardFacts.get(sessionId);
        // No row: no lease, live or not, whatever the time.
        const nowMs = row?.now_ms ?? 0;
        // The lease first: a fenced writer learns it lost the lease even once its successor appended.
        const stored = row
          ? leaseFromColumns(sessionId, row.lease_holder, row.lease_epoch, row.lease_expires_at)
          : null;
        const token = holder === null || epoch === null ? null : { holder, epoch };
        if (!appendLeaseMatches(stored, token, nowMs)) throw new LeaseLostError({ sessionId, holder, epoch });
        const actualSeq = row?.head_seq ?? 0;
        if (actualSeq !== expectedSeq) throw new SeqConflictError({ sessionId, expectedSeq, actualSeq });
        if (row !== undefined || holder !== null) throw new LeaseLostError({ sessionId, holder, epoch });
        s.insertSession.run({
          sessionId,
          agentName: init?.agentName ?? '',
          ownerId: init?.ownerId ?? null,
          tenantId: init?.tenantId ?? null,
          state: initialState ?? 'null',
          headSeq: guard.newHead,
          // The database's clock, never the writer's: retention judges idleness by it.
          now: null,
          incarnationId: newIncarnationId(),
        });
      }
      try {
        for (const { rows, params } of inserts) insertRows(rows).run(params);
      } catch (error) {
        // A row already at one of these seqs: another writer got there; the rollback undoes ours.
        if (isPrimaryKeyViolation(error))
          throw new SeqConflictError({ sessionId, expectedSeq, actualSeq: null });
        throw error;
      }
    });

    const acquireTx = db.transaction((...args: AcquireArgs) => {
      const [sessionId, holder, init, ttlMs] = args;
      const nowMs = dbNowMs();
      const nowIso = new Date(nowMs).toISOString();
      const expiresAt = expiryIso(nowMs, ttlMs);
      const row = s.selectSession.get({ sessionId });
      if (row === undefined) {
        const stateJson = JSON.stringify(init.state ?? null);
        const incarnationId = newIncarnationId();
        s.insertSession.run({
          sessionId,
          agentName: init.agentName,
          ownerId: init.ownerId ?? null,
          tenantId: init.tenantId ?? null,
          state: stateJson,
          headSeq: 0,
          now: nowIso,
          incarnationId,
        });
        s.grantLease.run({ sessionId, holder, epoch: 1, expiresAt });
        return {
          epoch: 1,
          session: decodeSqliteSession({
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
            incarnation_id: incarnationId,
          }),
        };
      }
      if (!ownerMatches({ ownerId: row.owner_id, tenantId: row.tenant_id }, init)) {
        throw new SessionAccessDeniedError({ sessionId });
      }
      const current = decodeSqliteSession(row);
      if (!canAcquireLease(current.lease, holder, nowMs)) {
        throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(current.lease!, nowMs) });
      }
      // The epoch column survives release, so every grant is higher than all earlier ones.
      const epoch = row.lease_epoch + 1;
      s.grantLease.run({ sessionId, holder, epoch, expiresAt });
      return { epoch, session: { ...current, lease: { holder, epoch, expiresAt } } };
    });

    // One read transaction: the session and its messages come from the same snapshot.
    const loadTx = db.transaction((sessionId: string, afterSeq: number) => {
      const row = s.selectSession.get({ sessionId });
      if (row === undefined) return null;
      const rows = s.selectMessages.all({ sessionId, afterSeq });
      return {
        session: decodeSqliteSession(row),
        messages: rows.map((m) => decodeSqliteMessage(sessionId, m)),
      };
    });

    const deleteTx = db.transaction((sessionId: string) => {
      s.deleteMessages.run(sessionId);
      return s.deleteSession.run(sessionId).changes > 0;
    });

    // One write transaction: the candidates, and each idle one's row and messages, together.
    const deleteIdleTx = db.transaction(({ idleBefore, limit, cursor }: RetentionRequest) => {
      const nowIso = new Date(dbNowMs()).toISOString();
      const candidates =
        cursor === null
          ? s.idleCandidates.all(idleBefore, limit)
          : s.idleCandidatesAfter.all(idleBefore, ...decodeRetentionCursor<string>(cursor, 'string'), limit);
      const deleted: string[] = [];
      for (const { id } of candidates) {
        if (s.deleteIfIdle.run({ sessionId: id, idleBefore, now: nowIso }).changes === 0) continue;
        s.deleteMessages.run(id);
        deleted.push(id);
      }
      const last = candidates[candidates.length - 1];
      return {
        deleted,
        nextCursor:
          candidates.length === limit && last ? encodeRetentionCursor(last.updated_at, last.id) : null,
      };
    });

    return {
      s,
      list: listStatementCache(db, tables),
      removeIdle: (request) => deleteIdleTx.immediate(request),
      append: (args) => appendTx.immediate(args),
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

  // Every input reaches these methods checked and copied by core's boundary.
  return defineStore({
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

    async load(sessionId, { afterSeq }) {
      return ready().load(sessionId, afterSeq);
    },

    async append(sessionId, input, encoded) {
      const p = ready();
      const { messages, expectedSeq } = input;
      // Everything that can be computed outside the write lock is, so the transaction stays short.
      const inserts: AppendArgs['inserts'] = [];
      for (let first = 0; first < messages.length; first += MESSAGE_ROWS_PER_INSERT) {
        const rows = Math.min(MESSAGE_ROWS_PER_INSERT, messages.length - first);
        const params: MessageInsertParams = { sessionId, firstSeq: expectedSeq + 1 + first };
        for (let k = 0; k < rows; k++) {
          const message = messages[first + k]!;
          params[`id${k}`] = message.id;
          params[`role${k}`] = message.role;
          params[`message${k}`] = encoded[first + k]!;
        }
        inserts.push({ rows, params });
      }
      const state = input.session?.state;
      const stateJson = state === undefined ? null : JSON.stringify(state);
      const init = input.session?.init;
      p.append({
        guard: {
          sessionId,
          expectedSeq,
          newHead: expectedSeq + messages.length,
          state: stateJson,
          release: input.releaseLease ? 1 : 0,
          holder: input.lease?.holder ?? null,
          epoch: input.lease?.epoch ?? null,
        },
        inserts,
        init,
        initialState: expectedSeq === 0 ? (stateJson ?? JSON.stringify(init?.state ?? null)) : null,
      });
      return { headSeq: expectedSeq + messages.length };
    },

    async acquireLease(sessionId, { holder, ttlMs, init }) {
      return ready().acquire(sessionId, holder, init, ttlMs);
    },

    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      const p = ready();
      // The expiry is the database's clock + TTL, computed and returned by the UPDATE itself.
      const renewed = p.s.renewLease.get({ sessionId, holder, epoch, ttlMs });
      if (renewed === undefined) throw new LeaseLostError({ sessionId, holder, epoch });
      return { expiresAt: renewed.expiresAt };
    },

    async releaseLease(sessionId, { holder, epoch }) {
      const p = ready();
      return { released: p.s.releaseLease.run({ sessionId, holder, epoch }).changes > 0 };
    },

    async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
      const p = ready();
      const params: unknown[] = [];
      if (ownerId !== undefined) params.push(ownerId);
      if (tenantId !== undefined) params.push(tenantId);
      if (agentName !== undefined) params.push(agentName);
      if (cursor != null) params.push(cursor);
      // One row more than the page tells whether another page exists.
      params.push(limit + 1);
      const rows: SqliteSessionRow[] = p
        .list({ ownerId, tenantId, agentName }, cursor != null)
        .all(...params);
      const page = rows.slice(0, limit).map(decodeSqliteSession);
      return { sessions: page, nextCursor: rows.length > limit ? page[page.length - 1]!.id : null };
    },

    async deleteSession(sessionId) {
      return { deleted: ready().remove(sessionId) };
    },

    async deleteIdleSessions(request) {
      return ready().removeIdle(request);
    },

    async close() {
      if (closed) return;
      closed = true;
      if (owned) db.close();
    },
  });
}
