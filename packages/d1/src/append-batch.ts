import { type AppendInput, LeaseLostError, SeqConflictError } from '@agentstore/core';
import { newIncarnationId, utf8ByteLength } from '@agentstore/core/store';
import {
  SQLITE_MESSAGE_COLUMNS,
  sqliteLeaseFree,
  sqliteLeaseHeld,
  sqliteNowIso,
  type SqliteTableNames as TableNames,
} from '@agentstore/sqlite-dialect';
import type { D1DatabaseLike, D1StatementLike } from './d1-binding.ts';
import { D1_PLATFORM_LIMITS } from './limits.ts';

/**
 * D1's `batch()` is one transaction but cannot abort on a condition; a statement that raises an
 * error rolls the whole batch back. The guard raises one on purpose: `json_extract` with a path
 * that is not a JSON path fails with "bad JSON path: '<path>'", and the path carries what went
 * wrong (and the stored head seq), so the caller learns it without a second read. The failing
 * branch reads columns, so SQLite cannot evaluate it ahead of the CASE that guards it.
 */
const GUARD_MARK = 'agentstore-guard';

/** The lease first: a fenced writer learns it lost the lease even once its successor appended. */
export function guardSql(t: TableNames): string {
  const lease = CASE_LEASE_LOST;
  return `SELECT CASE
    WHEN ${lease}
      THEN json_extract('{}', '${GUARD_MARK}:lease-lost:' || coalesce(s.head_seq, 0))
    WHEN coalesce(s.head_seq, 0) <> ?2
      THEN json_extract('{}', '${GUARD_MARK}:seq-conflict:' || coalesce(s.head_seq, 0))
    ELSE 1 END AS ok
  FROM (SELECT 1) AS one LEFT JOIN ${t.sessions} AS s ON s.id = ?1`;
}

/**
 * The lease is lost for this append: without a token (`?3` null), someone holds a live lease;
 * with one, it is not the current holder and epoch. Liveness is judged by the database's clock.
 * The predicates are core's SQLite dialect.
 */
const CASE_LEASE_LOST = `CASE WHEN ?3 IS NULL
           THEN s.id IS NOT NULL AND NOT ${sqliteLeaseFree({ now: sqliteNowIso() }, 's.')}
           ELSE NOT ${sqliteLeaseHeld({ holder: '?3', epoch: '?4' }, 's.')} END`;

/** Creates the session (only ever reached when the guard saw none and `expectedSeq` was 0) or moves its head. */
// `updated_at` (and a new session's `created_at`) is the database's clock, never the writer's:
// retention judges idleness by it.
function sessionWriteSql(t: TableNames): string {
  return `INSERT INTO ${t.sessions}
      (id, agent_name, owner_id, tenant_id, state, head_seq, lease_epoch, created_at, updated_at, incarnation_id)
    VALUES (?1, ?2, ?3, ?4, coalesce(?7, ?5), ?6, 0, ${sqliteNowIso()}, ${sqliteNowIso()}, ?9)
    ON CONFLICT (id) DO UPDATE SET
      head_seq = excluded.head_seq,
      updated_at = excluded.updated_at,
      state = coalesce(?7, state),
      lease_holder = CASE WHEN ?8 THEN NULL ELSE lease_holder END,
      lease_expires_at = CASE WHEN ?8 THEN NULL ELSE lease_expires_at END`;
}

/** Bound values per message row: id, role, message (session id and first seq are shared). */
const VALUES_PER_ROW = 3;

/** `?1` session id, `?2` seq of the statement's first row, then id, role and message of each row. */
function insertSql(t: TableNames, rows: number): string {
  const values = Array.from({ length: rows }, (_, k) => {
    const at = 3 + k * VALUES_PER_ROW;
    return `(?1, ?2 + ${k}, ?${at}, ?${at + 1}, ?${at + 2})`;
  });
  return `INSERT INTO ${t.messages} ${SQLITE_MESSAGE_COLUMNS} VALUES ${values.join(', ')}`;
}

/** Rows per INSERT: every bound parameter but the two shared ones, and at most one D1 row's worth of bodies. */
const ROWS_PER_STATEMENT = Math.floor((D1_PLATFORM_LIMITS.boundParametersPerStatement - 2) / VALUES_PER_ROW);
const BODY_BYTES_PER_STATEMENT = D1_PLATFORM_LIMITS.rowBytes;

/** Splits the bodies into runs of indexes that each fit one INSERT statement. */
export function chunkBodies(bodies: readonly string[]): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const [index, body] of bodies.entries()) {
    // A UTF-16 code unit is at most 3 UTF-8 bytes: count exactly only when the bound does not fit.
    const size = body.length * 3 <= BODY_BYTES_PER_STATEMENT - bytes ? body.length * 3 : utf8ByteLength(body);
    if (
      current.length > 0 &&
      (current.length === ROWS_PER_STATEMENT || bytes + size > BODY_BYTES_PER_STATEMENT)
    ) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(index);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The statements of one append, to run as one `batch()`: guard, session write, message inserts. */
export function appendStatements(
  db: D1DatabaseLike,
  t: TableNames,
  sessionId: string,
  input: AppendInput,
  /** The messages' JSON as core's boundary measured it. */
  bodies: readonly string[],
): D1StatementLike[] {
  const { expectedSeq, lease } = input;
  const init = input.session?.init;
  const state = input.session?.state;
  const statements = [
    db.prepare(guardSql(t)).bind(sessionId, expectedSeq, lease?.holder ?? null, lease?.epoch ?? null),
    db.prepare(sessionWriteSql(t)).bind(
      sessionId,
      init?.agentName ?? '',
      init?.ownerId ?? null,
      init?.tenantId ?? null,
      JSON.stringify(init?.state ?? null),
      expectedSeq + input.messages.length,
      state === undefined ? null : JSON.stringify(state),
      input.releaseLease ? 1 : 0,
      // Kept only if this append creates the session.
      newIncarnationId(),
    ),
  ];
  for (const chunk of chunkBodies(bodies)) {
    const values = chunk.flatMap((i) => [input.messages[i]!.id, input.messages[i]!.role, bodies[i]!]);
    statements.push(
      db.prepare(insertSql(t, chunk.length)).bind(sessionId, expectedSeq + 1 + chunk[0]!, ...values),
    );
  }
  return statements;
}

function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++)
    parts.push(e.message);
  return parts.join(' | ');
}

/**
 * Turns the error of a failed append batch into the contract's error. Every error listed here
 * rolled the batch back, so nothing was written. Anything else is rethrown as is: its outcome is
 * unknown (the loop settles that by re-reading).
 */
export function appendFailure(error: unknown, sessionId: string, input: AppendInput): unknown {
  const text = errorText(error);
  const guard = new RegExp(`${GUARD_MARK}:(seq-conflict|lease-lost):(\\d+)`).exec(text);
  if (guard?.[1] === 'seq-conflict') {
    return new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: Number(guard[2]) });
  }
  if (guard?.[1] === 'lease-lost') {
    return new LeaseLostError({
      sessionId,
      holder: input.lease?.holder ?? null,
      epoch: input.lease?.epoch ?? null,
    });
  }
  // The primary key caught a seq the guard let through (a session row out of step with its messages).
  if (/UNIQUE constraint failed: \w*messages\.session_id/.test(text)) {
    return new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: null });
  }
  return error;
}
