import {
  type AppendInput,
  LeaseLostError,
  type NewMessage,
  SeqConflictError,
  utf8ByteLength,
} from '@agentstore/core';
import type { D1DatabaseLike, D1StatementLike } from './d1-binding.ts';
import { D1_PLATFORM_LIMITS } from './limits.ts';
import type { TableNames } from './schema.ts';

/**
 * D1's `batch()` is one transaction but cannot abort on a condition; a statement that raises an
 * error rolls the whole batch back. The guard raises one on purpose: `json_extract` with a path
 * that is not a JSON path fails with "bad JSON path: '<path>'", and the path carries what went
 * wrong (and the stored head seq), so the caller learns it without a second read. The failing
 * branch reads columns, so SQLite cannot evaluate it ahead of the CASE that guards it.
 */
const GUARD_MARK = 'agentstore-guard';

/**
 * The database's clock as the ISO-8601 text lease expiries are stored in (`%f` is SS.SSS), plus
 * an optional number of ms bound as `?N`. Lease expiry is granted and judged by this one clock,
 * never a Worker's, so a client whose clock is off can neither take a live lease nor stretch it.
 */
export const dbNowIso = (plusMsParam?: string) =>
  `strftime('%Y-%m-%dT%H:%M:%fZ', 'now'${plusMsParam ? `, '+' || (${plusMsParam} / 1000.0) || ' seconds'` : ''})`;

/** The lease first: a fenced writer learns it lost the lease even once its successor appended. */
export function guardSql(t: TableNames): string {
  return `SELECT CASE
    WHEN CASE WHEN ?3 IS NULL
           THEN s.lease_holder IS NOT NULL AND s.lease_expires_at > ${dbNowIso()}
           ELSE s.lease_holder IS NOT ?3 OR s.lease_epoch IS NOT ?4 END
      THEN json_extract('{}', '${GUARD_MARK}:lease-lost:' || coalesce(s.head_seq, 0))
    WHEN coalesce(s.head_seq, 0) <> ?2
      THEN json_extract('{}', '${GUARD_MARK}:seq-conflict:' || coalesce(s.head_seq, 0))
    ELSE 1 END AS ok
  FROM (SELECT 1) AS one LEFT JOIN ${t.sessions} AS s ON s.id = ?1`;
}

/** Creates the session (only ever reached when the guard saw none and `expectedSeq` was 0) or moves its head. */
function sessionWriteSql(t: TableNames): string {
  return `INSERT INTO ${t.sessions}
      (id, agent_name, owner_id, tenant_id, state, head_seq, lease_epoch, created_at, updated_at)
    VALUES (?1, ?2, ?3, ?4, coalesce(?8, ?5), ?6, 0, ?7, ?7)
    ON CONFLICT (id) DO UPDATE SET
      head_seq = excluded.head_seq,
      updated_at = excluded.updated_at,
      state = coalesce(?8, state),
      lease_holder = CASE WHEN ?9 THEN NULL ELSE lease_holder END,
      lease_expires_at = CASE WHEN ?9 THEN NULL ELSE lease_expires_at END`;
}

/** `?1` session id, `?2` seq of the statement's first row, `?3…` the bodies. */
function insertSql(t: TableNames, rows: number): string {
  const values = Array.from({ length: rows }, (_, k) => `(?1, ?2 + ${k}, ?${k + 3})`);
  return `INSERT INTO ${t.messages} (session_id, seq, body) VALUES ${values.join(', ')}`;
}

/** Rows per INSERT: every bound parameter but the two shared ones, and at most one D1 row's worth of bodies. */
const ROWS_PER_STATEMENT = D1_PLATFORM_LIMITS.boundParametersPerStatement - 2;
const BODY_BYTES_PER_STATEMENT = D1_PLATFORM_LIMITS.rowBytes;

/** Splits the bodies into runs that each fit one INSERT statement. */
export function chunkBodies(bodies: string[]): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const body of bodies) {
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
    current.push(body);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

const encodeBody = (message: NewMessage): string => JSON.stringify(message);

/** The statements of one append, to run as one `batch()`: guard, session write, message inserts. */
export function appendStatements(
  db: D1DatabaseLike,
  t: TableNames,
  sessionId: string,
  input: AppendInput,
  nowIso: string,
): D1StatementLike[] {
  const { expectedSeq, lease } = input;
  const init = input.session?.init;
  const state = input.session?.state;
  const statements = [
    db.prepare(guardSql(t)).bind(sessionId, expectedSeq, lease?.holder ?? null, lease?.epoch ?? null),
    db
      .prepare(sessionWriteSql(t))
      .bind(
        sessionId,
        init?.agentName ?? '',
        init?.ownerId ?? null,
        init?.tenantId ?? null,
        JSON.stringify(init?.state ?? null),
        expectedSeq + input.messages.length,
        nowIso,
        state === undefined ? null : JSON.stringify(state),
        input.releaseLease ? 1 : 0,
      ),
  ];
  let seq = expectedSeq + 1;
  for (const chunk of chunkBodies(input.messages.map(encodeBody))) {
    statements.push(db.prepare(insertSql(t, chunk.length)).bind(sessionId, seq, ...chunk));
    seq += chunk.length;
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
