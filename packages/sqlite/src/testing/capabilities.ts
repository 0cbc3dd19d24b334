import type { MessageRecord } from '@agentstore/core';
import {
  SQLITE_MESSAGE_COLUMNS,
  sqliteRawMessagesSql,
  sqliteRawSessionSql,
  sqliteTableNames,
} from '@agentstore/core/store';
import type {
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from '@agentstore/core/testing';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { migrate } from '../schema.ts';

/**
 * The kit's capabilities for SQLite, written with plain SQL on raw better-sqlite3 so that a
 * bad write by the adapter cannot hide behind a matching bad read. Published as `@agentstore/sqlite/testing` for the kit, the bench and the torture runner.
 */

export interface CapabilityTarget {
  /** A file is read through a separate connection; `:memory:` needs the store's own. */
  connection: { path: string } | { database: Database };
  tablePrefix?: string;
}

/** A connection of our own to the file (same pragmas as the store), or the shared in-memory one. */
function connect(target: CapabilityTarget): { db: Database; close: () => void } {
  if ('database' in target.connection) return { db: target.connection.database, close: () => {} };
  const db = new BetterSqlite3(target.connection.path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return { db, close: () => db.close() };
}

const ID = { sessionId: '@sessionId' };

export function rawReader(target: CapabilityTarget, db: Database): RawReader {
  const t = sqliteTableNames(target.tablePrefix);
  const session = db.prepare<[{ sessionId: string }], RawSessionRow>(sqliteRawSessionSql(t, ID));
  const messages = db.prepare<[{ sessionId: string }], RawMessageRow>(sqliteRawMessagesSql(t, ID));
  return {
    async session(sessionId) {
      return session.get({ sessionId }) ?? null;
    },
    async messages(sessionId) {
      return messages.all({ sessionId });
    },
  };
}

export function corrupter(
  target: CapabilityTarget,
  db: Database,
): (sessionId: string, seq: number) => Promise<void> {
  const t = sqliteTableNames(target.tablePrefix);
  const overwrite = db.prepare(`UPDATE ${t.messages} SET message = ? WHERE session_id = ? AND seq = ?`);
  return async (sessionId, seq) => {
    const { changes } = overwrite.run('{"id": "truncated', sessionId, seq);
    if (changes !== 1) throw new Error(`no message at seq ${seq} of ${JSON.stringify(sessionId)} to corrupt`);
  };
}

/**
 * The cheapest correct atomic append a user would write by hand: one IMMEDIATE transaction,
 * a head-guarded UPDATE, one INSERT per message, statements prepared once.
 */
export function rawFloor(target: CapabilityTarget, db: Database): RawAppendFloor {
  const t = sqliteTableNames(target.tablePrefix);
  const guard = db.prepare(
    `UPDATE ${t.sessions} SET head_seq = ?, updated_at = ? WHERE id = ? AND head_seq = ?`,
  );
  const insert = db.prepare(`INSERT INTO ${t.messages} ${SQLITE_MESSAGE_COLUMNS} VALUES (?, ?, ?, ?, ?)`);
  const write = db.transaction(
    (sessionId: string, expectedSeq: number, messages: MessageRecord[], encoded: string[], now: string) => {
      const head = expectedSeq + messages.length;
      if (guard.run(head, now, sessionId, expectedSeq).changes !== 1)
        throw new Error('floor: head seq moved');
      for (let i = 0; i < messages.length; i++) {
        insert.run(sessionId, messages[i]!.seq, messages[i]!.id, messages[i]!.role, encoded[i]);
      }
    },
  );
  return {
    async append(sessionId, expectedSeq, messages) {
      const encoded = messages.map((m) => JSON.stringify(m));
      write.immediate(sessionId, expectedSeq, messages, encoded, new Date().toISOString());
    },
  };
}

/** All three capabilities plus a `close` for the connection they opened (if any). */
export function sqliteCapabilities(
  target: CapabilityTarget,
): StoreCapabilities & { db: Database; close: () => void } {
  const { db, close } = connect(target);
  // The statements below need the tables; migrate() is idempotent.
  migrate(db, { tablePrefix: target.tablePrefix });
  return {
    raw: rawReader(target, db),
    corrupt: corrupter(target, db),
    floor: rawFloor(target, db),
    db,
    close,
  };
}
