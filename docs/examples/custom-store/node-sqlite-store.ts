// A complete custom AgentStore on node:sqlite (built into Node ≥ 22.13), written the way you
// would write one for a database agentstore has no adapter for. `conformance-target.ts` beside
// it tells `agentstore-conformance` how to test it.
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import {
  type AgentStore,
  CorruptRecordError,
  type Lease,
  LeaseLostError,
  type MessageRecord,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type StoreLimits,
} from '@agentstore/core';
import {
  appendLeaseMatches,
  canAcquireLease,
  decodeRetentionCursor,
  decodeSessionColumns,
  defineStore,
  encodeRetentionCursor,
  expiryIso,
  leaseFromColumns,
  newIncarnationId,
  ownerMatches,
  retryAfterMs,
  type SessionColumns,
} from '@agentstore/core/store';

/** Creates the tables if they are missing. Safe to run on every start. */
export function migrate(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS agent_sessions (
      id TEXT PRIMARY KEY,
      agent_name TEXT NOT NULL,
      owner_id TEXT,
      tenant_id TEXT,
      state TEXT NOT NULL,
      head_seq INTEGER NOT NULL,
      lease_holder TEXT,
      lease_epoch INTEGER NOT NULL DEFAULT 0,
      lease_expires_at TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      -- Fixed at creation (newIncarnationId()): a re-created session id is another incarnation,
      -- and run() puts it in every tool call's idempotency key.
      incarnation_id TEXT
    ) STRICT;
    CREATE TABLE IF NOT EXISTS agent_messages (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      id TEXT NOT NULL,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      -- toolCalls, toolCallId, toolName, kind, createdAt as JSON
      meta TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) STRICT, WITHOUT ROWID;
    -- One index per listSessions filter, and one on last activity for deleteIdleSessions.
    CREATE INDEX IF NOT EXISTS agent_sessions_owner ON agent_sessions (owner_id, id);
    CREATE INDEX IF NOT EXISTS agent_sessions_tenant ON agent_sessions (tenant_id, id);
    CREATE INDEX IF NOT EXISTS agent_sessions_agent ON agent_sessions (agent_name, id);
    CREATE INDEX IF NOT EXISTS agent_sessions_idle ON agent_sessions (updated_at, id);
  `);
}

/** Opens a connection tuned for durability: WAL, fsync on every commit. */
export function openDatabase(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  migrate(db);
  return db;
}

type SessionRow = SessionColumns & { head_seq: number; lease_epoch: number };

interface MessageRow {
  seq: number;
  /** The id's and the content's UTF-8 bytes: node:sqlite reads a TEXT value only up to its first U+0000. */
  id: Uint8Array;
  role: string;
  content: Uint8Array;
  meta: string;
}

const utf8 = new TextDecoder();

const LIMITS: StoreLimits = { maxMessageBytes: 1024 * 1024, maxMessagesPerAppend: 500 };

const leaseOf = (row: SessionRow): Lease | null =>
  leaseFromColumns(row.id, row.lease_holder, row.lease_epoch, row.lease_expires_at);

// The session columns follow core's SQL layout, so core decodes them (bad JSON → CorruptRecordError).
const decodeSession = decodeSessionColumns;

function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  try {
    // Optional fields live in `meta` only when they were set, so absent stays absent.
    const meta = JSON.parse(row.meta) as Omit<MessageRecord, 'id' | 'seq' | 'role' | 'content'>;
    return {
      id: utf8.decode(row.id),
      seq: row.seq,
      role: row.role as MessageRecord['role'],
      content: utf8.decode(row.content),
      ...meta,
    };
  } catch (error) {
    throw new CorruptRecordError({ sessionId, seq: row.seq, reason: 'meta is not JSON' }, { cause: error });
  }
}

export function nodeSqliteStore(options: { path: string }): AgentStore {
  const db = openDatabase(options.path);
  // Every value is a bound parameter: session ids are arbitrary text, never SQL.
  const sql = {
    session: db.prepare('SELECT * FROM agent_sessions WHERE id = ?'),
    messages: db.prepare(
      'SELECT seq, CAST(id AS BLOB) AS id, role, CAST(content AS BLOB) AS content, meta FROM agent_messages WHERE session_id = ? AND seq > ? ORDER BY seq',
    ),
    createSession: db.prepare(
      `INSERT INTO agent_sessions (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at, incarnation_id)
       VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)`,
    ),
    insertMessage: db.prepare(
      'INSERT INTO agent_messages (session_id, seq, id, role, content, meta) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    advance: db.prepare(
      `UPDATE agent_sessions SET head_seq = ?, state = coalesce(?, state), updated_at = ?,
         lease_holder = CASE WHEN ? THEN NULL ELSE lease_holder END,
         lease_expires_at = CASE WHEN ? THEN NULL ELSE lease_expires_at END
       WHERE id = ?`,
    ),
    grant: db.prepare(
      'UPDATE agent_sessions SET lease_holder = ?, lease_epoch = lease_epoch + 1, lease_expires_at = ? WHERE id = ?',
    ),
    renew: db.prepare(
      'UPDATE agent_sessions SET lease_expires_at = ? WHERE id = ? AND lease_holder = ? AND lease_epoch = ?',
    ),
    release: db.prepare(
      'UPDATE agent_sessions SET lease_holder = NULL, lease_expires_at = NULL WHERE id = ? AND lease_holder = ? AND lease_epoch = ?',
    ),
    // The database's clock (the OS clock SQLite reads), not the caller's Date: leases are granted
    // and judged by one authority clock, so a process with a wrong clock cannot take a live lease.
    clock: db.prepare("SELECT CAST(round(unixepoch('now', 'subsec') * 1000) AS INTEGER) AS now"),
    deleteMessages: db.prepare('DELETE FROM agent_messages WHERE session_id = ?'),
    deleteSession: db.prepare('DELETE FROM agent_sessions WHERE id = ?'),
    idleCandidates: db.prepare(
      `SELECT id, updated_at FROM agent_sessions WHERE updated_at < ? AND (updated_at, id) > (?, ?)
       ORDER BY updated_at, id LIMIT ?`,
    ),
    // Re-checked in the same transaction as the delete: still idle, and no unexpired lease.
    deleteIfIdle: db.prepare(
      `DELETE FROM agent_sessions WHERE id = ? AND updated_at < ?
       AND (lease_holder IS NULL OR lease_expires_at <= ?)`,
    ),
  };

  /** BEGIN IMMEDIATE takes the write lock up front, so check-then-write is atomic across processes too. */
  function transaction<T>(work: () => T): T {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }

  const sessionRow = (id: string) => sql.session.get(id) as SessionRow | undefined;
  const dbNow = () => Number((sql.clock.get() as { now: number | bigint }).now);

  // defineStore is core's validation boundary: each method below gets its input copied once (a
  // getter or Proxy cannot answer the checks one way and the write another) and checked, so bad
  // input is InvalidArgumentError / PayloadTooLargeError before anything here runs.
  return defineStore({
    durable: true,
    limits: LIMITS,

    async load(sessionId, { afterSeq }) {
      // One read transaction, so the session and its messages are one snapshot.
      db.exec('BEGIN');
      try {
        const row = sessionRow(sessionId);
        if (!row) return null;
        const rows = sql.messages.all(sessionId, afterSeq) as unknown as MessageRow[];
        return { session: decodeSession(row), messages: rows.map((r) => decodeMessage(sessionId, r)) };
      } finally {
        db.exec('COMMIT');
      }
    },

    async append(sessionId, input) {
      return transaction(() => {
        const now = dbNow();
        const iso = new Date(now).toISOString();
        let row = sessionRow(sessionId);
        const head = row?.head_seq ?? 0;
        // The lease first: a fenced writer must hear LeaseLostError even after its successor appended.
        if (!appendLeaseMatches(row ? leaseOf(row) : null, input.lease, now)) {
          throw new LeaseLostError({
            sessionId,
            holder: input.lease?.holder ?? null,
            epoch: input.lease?.epoch ?? null,
          });
        }
        if (head !== input.expectedSeq) {
          throw new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: head });
        }
        if (!row) {
          const init = input.session?.init;
          sql.createSession.run(
            sessionId,
            init?.agentName ?? '',
            init?.ownerId ?? null,
            init?.tenantId ?? null,
            JSON.stringify(init?.state ?? null),
            iso,
            iso,
            newIncarnationId(),
          );
          row = sessionRow(sessionId)!;
        }
        input.messages.forEach(({ id, role, content, ...meta }, i) => {
          sql.insertMessage.run(sessionId, head + i + 1, id, role, content, JSON.stringify(meta));
        });
        const headSeq = head + input.messages.length;
        const state = input.session?.state === undefined ? null : JSON.stringify(input.session.state);
        const release = input.releaseLease ? 1 : 0;
        sql.advance.run(headSeq, state, iso, release, release, sessionId);
        return { headSeq };
      });
    },

    async acquireLease(sessionId, { holder, ttlMs, init }) {
      return transaction(() => {
        const now = dbNow();
        const iso = new Date(now).toISOString();
        const existing = sessionRow(sessionId);
        if (existing && !ownerMatches(decodeSession(existing), init))
          throw new SessionAccessDeniedError({ sessionId });
        const lease = existing ? leaseOf(existing) : null;
        if (lease && !canAcquireLease(lease, holder, now)) {
          throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(lease, now) });
        }
        if (!existing) {
          const { agentName, ownerId, tenantId, state } = init;
          sql.createSession.run(
            sessionId,
            agentName,
            ownerId,
            tenantId,
            JSON.stringify(state),
            iso,
            iso,
            newIncarnationId(),
          );
        }
        sql.grant.run(holder, expiryIso(now, ttlMs), sessionId);
        const session = decodeSession(sessionRow(sessionId)!);
        return { epoch: session.lease!.epoch, session };
      });
    },

    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      const expiresAt = expiryIso(dbNow(), ttlMs);
      const { changes } = sql.renew.run(expiresAt, sessionId, holder, epoch);
      if (changes !== 1) throw new LeaseLostError({ sessionId, holder, epoch });
      return { expiresAt };
    },

    async releaseLease(sessionId, { holder, epoch }) {
      return { released: sql.release.run(sessionId, holder, epoch).changes === 1 };
    },

    async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
      const where: string[] = [];
      const params: SQLInputValue[] = [];
      for (const [column, value] of [
        ['owner_id', ownerId],
        ['tenant_id', tenantId],
        ['agent_name', agentName],
        ['id >', cursor ?? undefined],
      ] as const) {
        if (value === undefined) continue;
        where.push(column.endsWith('>') ? `${column} ?` : `${column} = ?`);
        params.push(value);
      }
      const rows = db
        .prepare(
          `SELECT * FROM agent_sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ?`,
        )
        .all(...params, limit + 1) as unknown as SessionRow[];
      const page = rows.slice(0, limit).map(decodeSession);
      return { sessions: page, nextCursor: rows.length > limit ? page.at(-1)!.id : null };
    },

    async deleteSession(sessionId) {
      return transaction(() => {
        sql.deleteMessages.run(sessionId);
        return { deleted: sql.deleteSession.run(sessionId).changes === 1 };
      });
    },

    async deleteIdleSessions({ idleBefore, limit, cursor }) {
      const [afterAt, afterId] = cursor === null ? ['', ''] : decodeRetentionCursor<string>(cursor, 'string');
      return transaction(() => {
        const candidates = sql.idleCandidates.all(idleBefore, afterAt, afterId, limit) as {
          id: string;
          updated_at: string;
        }[];
        // Lease liveness by the database's clock, as acquireLease judges it: a sweep run on a host
        // whose clock is ahead must not take a live lease for an expired one.
        const now = new Date(dbNow()).toISOString();
        const deleted: string[] = [];
        for (const { id } of candidates) {
          if (sql.deleteIfIdle.run(id, idleBefore, now).changes === 0) continue;
          sql.deleteMessages.run(id);
          deleted.push(id);
        }
        const last = candidates.at(-1);
        return {
          deleted,
          nextCursor:
            candidates.length === limit && last ? encodeRetentionCursor(last.updated_at, last.id) : null,
        };
      });
    },

    async close() {
      db.close();
    },
  });
}
