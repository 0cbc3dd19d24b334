import type { MessageRecord } from '@agentstore/core';
import type { RawAppendFloor, RawMessageRow, RawReader, RawSessionRow } from '@agentstore/core/testing';
import {
  SQLITE_MESSAGE_COLUMNS,
  sqliteRawMessagesSql,
  sqliteRawSessionSql,
} from '@agentstore/sqlite-dialect';
import type { D1DatabaseLike, D1StatementLike, TableNames } from '../index.ts';

/**
 * The conformance kit's capabilities for D1, written with plain SQL through the binding so they
 * share nothing with the store under test. No Node API: the worker bundle uses them too.
 */

export function d1RawReader(db: D1DatabaseLike, t: TableNames): RawReader {
  const id = { sessionId: '?1' };
  return {
    async session(sessionId): Promise<RawSessionRow | null> {
      const { results } = await db.prepare(sqliteRawSessionSql(t, id)).bind(sessionId).all<RawSessionRow>();
      return results[0] ?? null;
    },
    async messages(sessionId): Promise<RawMessageRow[]> {
      const { results } = await db.prepare(sqliteRawMessagesSql(t, id)).bind(sessionId).all<RawMessageRow>();
      return results;
    },
  };
}

/** Overwrites a stored message body with text that is not JSON. */
export function d1Corrupt(db: D1DatabaseLike, t: TableNames) {
  return async (sessionId: string, seq: number): Promise<void> => {
    const { results } = await db
      .prepare(`UPDATE ${t.messages} SET message = ? WHERE session_id = ? AND seq = ? RETURNING seq`)
      .bind('{"id": "corrupt", "role": ', sessionId, seq)
      .all();
    if (results.length !== 1) throw new Error(`no message ${seq} in session ${sessionId} to corrupt`);
  };
}

/**
 * The cheapest correct guarded append a user would write by hand: one batch of a guard that
 * errors when the head moved, the head update, and one multi-row INSERT. Statements are prepared
 * once and re-bound, as the store does.
 */
export function d1Floor(db: D1DatabaseLike, t: TableNames): RawAppendFloor {
  const guard = db.prepare(
    `SELECT CASE WHEN head_seq = ? THEN 1 ELSE json_extract('{}', 'conflict:' || head_seq) END
     FROM ${t.sessions} WHERE id = ?`,
  );
  const moveHead = db.prepare(`UPDATE ${t.sessions} SET head_seq = ?, updated_at = ? WHERE id = ?`);
  const inserts = new Map<number, D1StatementLike>();
  const insert = (rows: number) => {
    let statement = inserts.get(rows);
    if (!statement) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ');
      statement = db.prepare(`INSERT INTO ${t.messages} ${SQLITE_MESSAGE_COLUMNS} VALUES ${values}`);
      inserts.set(rows, statement);
    }
    return statement;
  };
  return {
    async append(sessionId: string, expectedSeq: number, messages: MessageRecord[]): Promise<void> {
      const values = messages.flatMap(({ seq, ...m }) => [sessionId, seq, m.id, m.role, JSON.stringify(m)]);
      await db.batch([
        guard.bind(expectedSeq, sessionId),
        moveHead.bind(expectedSeq + messages.length, new Date().toISOString(), sessionId),
        insert(messages.length).bind(...values),
      ]);
    },
  };
}
