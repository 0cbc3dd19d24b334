import { InvalidArgumentError } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { messages, tempDatabaseDir } from './helpers.ts';

const pragma = (db: BetterSqlite3.Database, name: string) => db.pragma(name, { simple: true });
// PRAGMA synchronous answers a number: 1 NORMAL, 2 FULL, 3 EXTRA.
const SYNCHRONOUS = { NORMAL: 1, FULL: 2, EXTRA: 3 } as const;

describe('connection settings', () => {
  const dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });

  it('opens a file in WAL mode with synchronous FULL and a busy timeout by default', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const store = sqliteStore({ path: dir.file() });
    expect(pragma(store.database, 'journal_mode')).toBe('wal');
    expect(pragma(store.database, 'synchronous')).toBe(SYNCHRONOUS.FULL);
    expect(pragma(store.database, 'busy_timeout')).toBe(5000);
    expect(store.durable).toBe(true);
    await store.close();
    // WAL is a property of the file: another connection sees it too.
    const other = new BetterSqlite3(dir.file());
    expect(pragma(other, 'journal_mode')).toBe('wal');
    other.close();
  });

  it.each(['NORMAL', 'EXTRA'] as const)('applies synchronous %s and a chosen busy timeout', async (level) => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const store = sqliteStore({ path: dir.file() }, { synchronous: level, busyTimeoutMs: 1234 });
    expect(pragma(store.database, 'synchronous')).toBe(SYNCHRONOUS[level]);
    expect(pragma(store.database, 'busy_timeout')).toBe(1234);
    await store.close();
  });

  it('closes a database it opened', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const store = sqliteStore({ path: dir.file() });
    await store.append('s1', { expectedSeq: 0, messages: messages('a', 1), lease: null });
    await store.close();
    expect(store.database.open).toBe(false);
    await expect(store.load('s1')).rejects.toBeInstanceOf(InvalidArgumentError);
    await store.close();
  });

  it('never closes a database the caller passed in, and keeps its settings unless told', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const db = new BetterSqlite3(dir.file());
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = NORMAL');
    const store = sqliteStore({ database: db });
    await store.append('s1', { expectedSeq: 0, messages: messages('a', 1), lease: null });
    await store.close();
    expect(db.open).toBe(true);
    expect(pragma(db, 'journal_mode')).toBe('delete');
    expect(pragma(db, 'synchronous')).toBe(SYNCHRONOUS.NORMAL);
    expect(db.prepare('SELECT count(*) AS n FROM agentstore_messages').get()).toEqual({ n: 1 });

    const told = sqliteStore({ database: db }, { synchronous: 'FULL' });
    expect(pragma(db, 'synchronous')).toBe(SYNCHRONOUS.FULL);
    expect((await told.load('s1'))?.session.headSeq).toBe(1);
    await told.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('works on an in-memory database', async () => {
    const store = sqliteStore({ path: ':memory:' });
    expect(pragma(store.database, 'journal_mode')).toBe('memory');
    // Nothing survives the process, so run() must not treat it as durable.
    expect(store.durable).toBe(false);
    await store.append('s1', { expectedSeq: 0, messages: messages('a', 3), lease: null });
    expect((await store.load('s1', { afterSeq: 1 }))?.messages.map((m) => m.seq)).toEqual([2, 3]);
    await store.close();
  });
});
