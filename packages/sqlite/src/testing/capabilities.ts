import type {
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from '@agentstore/core/testing';
import {
  SQLITE_MESSAGE_COLUMNS,
  sqliteRawMessagesSql,
  sqliteRawSessionSql,
  sqliteTableNames,
} from '@agentstore/sqlite-dialect';
import type { Database, Statement } from 'better-sqlite3';
import { openDatabase } from '../open-database.ts';
import type { SynchronousMode } from '../options.ts';
import { migrate } from '../schema.ts';

/**
 * The kit's capabilities for SQLite, written with plain SQL on raw better-sqlite3 so that a
 * bad write by the adapter cannot hide behind a matching bad read. Published as `@agentstore/sqlite/testing` for the kit, the bench and the torture runner.
 */

export interface CapabilityTarget {
  /** A file is read through a separate connection; `:memory:` needs the store's own. */
  connection: { path: string } | { database: Database };
  tablePrefix?: string;
  /** The store's `synchronous` option: the floor's connection must commit as durably as the store's. */
  synchronous?: SynchronousMode;
}

/**
 * A connection of our own to the file, opened by the store's own `openDatabase` with the store's
 * options (so journal_mode, synchronous and the busy timeout are the store's by construction), or
 * the shared in-memory one.
 */
function connect(target: CapabilityTarget): { db: Database; close: () => void } {
  if ('database' in target.connection) return { db: target.connection.database, close: () => {} };
  const { database } = openDatabase(
    target.connection,
    target.synchronous !== undefined ? { synchronous: target.synchronous } : {},
  );
  return { db: database, close: () => database.close() };
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
 * The cheapest correct atomic append a user would write by hand: one IMMEDIATE transaction of
 * two statements — the head-guarded UPDATE and ONE multi-row INSERT of every message —
 * prepared once per batch size, on a connection with the store's pragmas.
 */
export function rawFloor(target: CapabilityTarget, db: Database): RawAppendFloor {
  const t = sqliteTableNames(target.tablePrefix);
  const guard = db.prepare(
    `UPDATE ${t.sessions} SET head_seq = ?, updated_at = ? WHERE id = ? AND head_seq = ?`,
  );
  const inserts = new Map<number, Statement<unknown[]>>();
  const insertOf = (count: number) => {
    let insert = inserts.get(count);
    if (!insert) {
      const rows = Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ');
      insert = db.prepare<unknown[]>(`INSERT INTO ${t.messages} ${SQLITE_MESSAGE_COLUMNS} VALUES ${rows}`);
      inserts.set(count, insert);
    }
    return insert;
  };
  const write = db.transaction((sessionId: string, expectedSeq: number, head: number, values: unknown[]) => {
    if (guard.run(head, new Date().toISOString(), sessionId, expectedSeq).changes !== 1)
      throw new Error('floor: head seq moved');
    insertOf(values.length / 5).run(...values);
  });
  return {
    async append(sessionId, expectedSeq, messages) {
      const values = messages.flatMap((m) => [sessionId, m.seq, m.id, m.role, JSON.stringify(m)]);
      write.immediate(sessionId, expectedSeq, expectedSeq + messages.length, values);
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
