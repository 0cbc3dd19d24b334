import {
  SQLITE_MESSAGE_COLUMNS,
  type SqliteMessageRow,
  type SqliteSessionRow,
  type SqliteTableNames,
  sqliteLeaseFree,
  sqliteLeaseHeld,
  sqliteNowIso,
  sqliteSelectMessagesSql,
  sqliteSelectSessionSql,
} from '@agentstore/sqlite-dialect';
import type { Database, Statement } from 'better-sqlite3';

/** The named parameters of the append's guarded head update (better-sqlite3 binds `@name`). */
export interface AppendParams {
  sessionId: string;
  expectedSeq: number;
  newHead: number;
  /** The new state as JSON, or null to keep the stored one. */
  state: string | null;
  /** 1 releases the lease in the same write. */
  release: 0 | 1;
  holder: string | null;
  epoch: number | null;
}

/** The named parameters of a new session row. */
export interface InsertSessionParams {
  sessionId: string;
  agentName: string;
  ownerId: string | null;
  tenantId: string | null;
  state: string;
  headSeq: number;
  /** The creation time; null stamps the database's clock. */
  now: string | null;
  /** A fresh `newIncarnationId()`: this creation's, for good. */
  incarnationId: string;
}

/** Every statement the store runs, prepared once per store. */
export interface Statements {
  appendWithLease: Statement<[AppendParams]>;
  /** Judges the lease free by the database's clock, read inside the statement itself. */
  appendWithoutLease: Statement<[AppendParams]>;
  /**
   * Read only on the failure path, to tell a lost lease from a seq conflict; `now_ms` is the
   * database's clock, read with the row.
   */
  appendGuardFacts: Statement<
    [string],
    Pick<SqliteSessionRow, 'head_seq' | 'lease_holder' | 'lease_epoch' | 'lease_expires_at'> & {
      now_ms: number;
    }
  >;
  /**
   * The database's clock (the OS clock SQLite reads, not JavaScript's `Date`), in ms since the
   * epoch: leases are granted and judged by it, like the server clock of the other stores. The
   * statements that only compare or stamp it (append, renew) read it inline instead.
   */
  clock: Statement<[], { now: number }>;
  insertSession: Statement<[InsertSessionParams]>;
  selectSession: Statement<[{ sessionId: string }], SqliteSessionRow>;
  selectMessages: Statement<[{ sessionId: string; afterSeq: number }], SqliteMessageRow>;
  grantLease: Statement<[{ sessionId: string; holder: string; epoch: number; expiresAt: string }]>;
  /** Sets the expiry to the database's clock + `ttlMs` and returns it; no row: the lease is lost. */
  renewLease: Statement<
    [{ sessionId: string; holder: string; epoch: number; ttlMs: number }],
    { expiresAt: string }
  >;
  releaseLease: Statement<[{ sessionId: string; holder: string; epoch: number }]>;
  deleteMessages: Statement<[string]>;
  deleteSession: Statement<[string]>;
  /** Retention page from the activity index. Params: idleBefore, limit. */
  idleCandidates: Statement<unknown[], { id: string; updated_at: string }>;
  /** The same after a cursor. Params: idleBefore, cursor updated_at, cursor id, limit. */
  idleCandidatesAfter: Statement<unknown[], { id: string; updated_at: string }>;
  /** Deletes the session row only if still idle and unleased. */
  deleteIfIdle: Statement<[{ sessionId: string; idleBefore: string; now: string }]>;
}

const named = <Name extends string>(...names: Name[]) =>
  Object.fromEntries(names.map((n) => [n, `@${n}`])) as Record<Name, string>;

const CLOCK_MS = `CAST(round(unixepoch('now', 'subsec') * 1000) AS INTEGER)`;

export function prepareStatements(db: Database, t: SqliteTableNames): Statements {
  const appendSet = (
    updatedAt: string,
  ) => `UPDATE ${t.sessions} SET head_seq = @newHead, updated_at = ${updatedAt},
      state = coalesce(@state, state),
      lease_holder = iif(@release, NULL, lease_holder), lease_expires_at = iif(@release, NULL, lease_expires_at)
    WHERE id = @sessionId AND head_seq = @expectedSeq`;
  const sessionId = named('sessionId');
  // SQLite reads 'now' once per statement, so the guard and the stamp see the same instant.
  const dbNow = sqliteNowIso();
  return {
    // Stamped by the database's clock, never the writer's: retention judges idleness by it.
    appendWithLease: db.prepare(`${appendSet(dbNow)} AND ${sqliteLeaseHeld(named('holder', 'epoch'))}`),
    appendWithoutLease: db.prepare(`${appendSet(dbNow)} AND ${sqliteLeaseFree({ now: dbNow })}`),
    appendGuardFacts: db.prepare(
      `SELECT head_seq, lease_holder, lease_epoch, lease_expires_at, ${CLOCK_MS} AS now_ms FROM ${t.sessions} WHERE id = ?`,
    ),
    clock: db.prepare(`SELECT ${CLOCK_MS} AS now`),
    insertSession: db.prepare(
      `INSERT INTO ${t.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq, lease_holder, lease_epoch,
        lease_expires_at, created_at, updated_at, incarnation_id)
       VALUES (@sessionId, @agentName, @ownerId, @tenantId, @state, @headSeq, NULL, 0, NULL,
         coalesce(@now, ${dbNow}), coalesce(@now, ${dbNow}), @incarnationId)`,
    ),
    selectSession: db.prepare(sqliteSelectSessionSql(t, sessionId)),
    selectMessages: db.prepare(sqliteSelectMessagesSql(t, named('sessionId', 'afterSeq'))),
    grantLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_holder = @holder, lease_epoch = @epoch, lease_expires_at = @expiresAt
        WHERE id = @sessionId`,
    ),
    renewLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_expires_at = ${sqliteNowIso('@ttlMs')}
        WHERE id = @sessionId AND ${sqliteLeaseHeld(named('holder', 'epoch'))}
        RETURNING lease_expires_at AS expiresAt`,
    ),
    releaseLease: db.prepare(
      `UPDATE ${t.sessions} SET lease_holder = NULL, lease_expires_at = NULL
        WHERE id = @sessionId AND ${sqliteLeaseHeld(named('holder', 'epoch'))}`,
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
    deleteIfIdle: db.prepare(
      `DELETE FROM ${t.sessions} WHERE id = @sessionId AND updated_at < @idleBefore AND ${sqliteLeaseFree(named('now'))}`,
    ),
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
export function listStatementCache(db: Database, t: SqliteTableNames) {
  const cache = new Map<string, Statement<unknown[], SqliteSessionRow>>();
  return (filter: ListFilter, withCursor: boolean): Statement<unknown[], SqliteSessionRow> => {
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

/**
 * The named parameters of one message INSERT: the session, the seq of its first row, and per row
 * k its `id<k>`, `role<k>` and `message<k>` (the JSON core's boundary measured).
 */
export type MessageInsertParams = Record<string, string | number>;

/** `INSERT … VALUES (…), (…)` for 1…MESSAGE_ROWS_PER_INSERT rows, each prepared on first use. */
export function messageInserts(
  db: Database,
  t: SqliteTableNames,
): (rows: number) => Statement<[MessageInsertParams]> {
  const cache: Statement<[MessageInsertParams]>[] = [];
  return (rows) => {
    let statement = cache[rows];
    if (!statement) {
      const values = Array.from(
        { length: rows },
        (_, k) => `(@sessionId, @firstSeq + ${k}, @id${k}, @role${k}, @message${k})`,
      ).join(', ');
      statement = db.prepare(`INSERT INTO ${t.messages} ${SQLITE_MESSAGE_COLUMNS} VALUES ${values}`);
      cache[rows] = statement;
    }
    return statement;
  };
}
