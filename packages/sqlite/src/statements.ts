import type { Database, Statement } from 'better-sqlite3';
import type { MessageRow, SessionRow } from './rows.ts';
import type { TableNames } from './schema.ts';

/**
 * A lease with no holder, or one that expired at or before `?` (ISO-8601 text compares in time
 * order; an expiry past year 9999 is written `+0…` and counts as live).
 */
const LEASE_FREE = `(lease_holder IS NULL OR (lease_expires_at <= ? AND lease_expires_at NOT GLOB '+*'))`;

/** Every statement the store runs, prepared once per store. */
export interface Statements {
  /** Params: newHead, now, stateJson|null, release, release, id, expectedSeq, holder, epoch. */
  appendWithLease: Statement<unknown[]>;
  /** Params: newHead, now, stateJson|null, release, release, id, expectedSeq, now. */
  appendWithoutLease: Statement<unknown[]>;
  /** Read only on the failure path, to tell a seq conflict from a lost lease. */
  appendGuardFacts: Statement<[string], Pick<SessionRow, 'head_seq'>>;
  /** Params: id, agentName, ownerId, tenantId, stateJson, headSeq, now, now. */
  insertSession: Statement<unknown[]>;
  selectSession: Statement<[string], SessionRow>;
  selectMessages: Statement<[string, number], MessageRow>;
  /** Params: holder, epoch, expiresAt, id. */
  grantLease: Statement<unknown[]>;
  /** Params: expiresAt, id, holder, epoch. */
  renewLease: Statement<unknown[]>;
  /** Params: id, holder, epoch. */
  releaseLease: Statement<unknown[]>;
  deleteMessages: Statement<[string]>;
  deleteSession: Statement<[string]>;
  /** Retention page from the activity index. Params: idleBefore, limit. */
  idleCandidates: Statement<unknown[], { id: string; updated_at: string }>;
  /** The same after a cursor. Params: idleBefore, cursor updated_at, cursor id, limit. */
  idleCandidatesAfter: Statement<unknown[], { id: string; updated_at: string }>;
  /** Deletes the session row only if still idle and unleased. Params: id, idleBefore, now. */
  deleteIfIdle: Statement<unknown[]>;
}

export function prepareStatements(db: Database, t: TableNames): Statements {
  const appendSet = `UPDATE ${t.sessions} SET head_seq = ?, updated_at = ?, state = coalesce(?, state),
      lease_holder = iif(?, NULL, lease_holder), lease_expires_at = iif(?, NULL, lease_expires_at)
    WHERE id = ? AND head_seq = ?`;
  return {
    appendWithLease: db.prepare(`${appendSet} AND lease_holder = ? AND lease_epoch = ?`),
    appendWithoutLease: db.prepare(`${appendSet} AND ${LEASE_FREE}`),
    appendGuardFacts: db.prepare(`SELECT head_seq FROM ${t.sessions} WHERE id = ?`),
    insertSession: db.prepare(
      `INSERT INTO ${t.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, lease_holder, lease_epoch,
        lease_expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, 0, NULL, ?, ?)`,
    ),
    selectSession: db.prepare(`SELECT * FROM ${t.sessions} WHERE id = ?`),
    selectMessages: db.prepare(
      `SELECT seq, message FROM ${t.messages} WHERE session_id = ? AND seq > ? ORDER BY seq`,
    ),
    grantLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_holder = ?, lease_epoch = ?, lease_expires_at = ? WHERE id = ?`,
    ),
    renewLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_expires_at = ? WHERE id = ? AND lease_holder = ? AND lease_epoch = ?`,
    ),
    releaseLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_holder = NULL, lease_expires_at = NULL
        WHERE id = ? AND lease_holder = ? AND lease_epoch = ?`,
    ),
    deleteMessages: db.prepare(`DELETE FROM ${t.messages} WHERE session_id = ?`),
    deleteSession: db.prepare(`DELETE FROM ${t.sessions} WHERE id = ?`),
    idleCandidates: db.prepare(
      `SELECT id, updated_at FROM ${t.sessions} WHERE updated_at < ? ORDER BY updated_at, id LIMIT ?`,
    ),
    idleCandidatesAfter: db.prepare(
      `SELECT id, updated_at FROM ${t.sessions} WHERE updated_at < ? AND (updated_at, id) > (?, ?)
        ORDER BY updated_at, id LIMIT ?`,
    ),
    deleteIfIdle: db.prepare(`DELETE FROM ${t.sessions} WHERE id = ? AND updated_at < ? AND ${LEASE_FREE}`),
  };
}

export interface ListFilter {
  ownerId?: string;
  tenantId?: string;
  agentName?: string;
}

/**
 * listSessions needs one statement per combination of filters (so each can use its index);
 * they are prepared on first use and kept.
 */
export function listStatementCache(db: Database, t: TableNames) {
  const cache = new Map<string, Statement<unknown[], SessionRow>>();
  return (filter: ListFilter, withCursor: boolean): Statement<unknown[], SessionRow> => {
    const conditions: string[] = [];
    if (filter.ownerId !== undefined) conditions.push('owner_id = ?');
    if (filter.tenantId !== undefined) conditions.push('tenant_id = ?');
    if (filter.agentName !== undefined) conditions.push('agent_name = ?');
    if (withCursor) conditions.push('id > ?');
    const key = conditions.join(' AND ');
    let statement = cache.get(key);
    if (!statement) {
      const where = conditions.length > 0 ? `WHERE ${key}` : '';
      statement = db.prepare(`SELECT * FROM ${t.sessions} ${where} ORDER BY id LIMIT ?`);
      cache.set(key, statement);
    }
    return statement;
  };
}

/** Rows per INSERT: one multi-row statement beats a run() per message; chunks keep the cache small. */
export const MESSAGE_ROWS_PER_INSERT = 16;
/** Bound values per message row: session_id, seq, id, role, message. */
export const MESSAGE_ROW_WIDTH = 5;

/** `INSERT … VALUES (…), (…)` for 1…MESSAGE_ROWS_PER_INSERT rows, each prepared on first use. */
export function messageInserts(db: Database, t: TableNames): (rows: number) => Statement<unknown[]> {
  const cache: Statement<unknown[]>[] = [];
  return (rows) => {
    let statement = cache[rows];
    if (!statement) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ');
      statement = db.prepare(
        `INSERT INTO ${t.messages} (session_id, seq, id, role, message) VALUES ${values}`,
      );
      cache[rows] = statement;
    }
    return statement;
  };
}
