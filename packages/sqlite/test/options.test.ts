import { InvalidArgumentError } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaStatements, sqliteStore, validateTablePrefix } from '../src/index.ts';
import { messages, tempDatabaseDir } from './helpers.ts';

describe('options', () => {
  const dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });

  it.each([
    '',
    '1abc',
    '_x',
    'sqlite_x',
    'a-b',
    'a b',
    'x'.repeat(49),
    'a"; DROP TABLE agentstore_sessions; --',
    'é',
    'a.b',
  ])('rejects table prefix %j before touching the database', (prefix) => {
    const db = new BetterSqlite3(':memory:');
    expect(() => sqliteStore({ database: db }, { tablePrefix: prefix })).toThrow(InvalidArgumentError);
    expect(() => schemaStatements({ tablePrefix: prefix })).toThrow(InvalidArgumentError);
    expect(db.prepare(`SELECT count(*) AS n FROM sqlite_schema`).get()).toEqual({ n: 0 });
    db.close();
  });

  it.each(['a', 'a_', 'App_1_', 'x'.repeat(48)])('accepts table prefix %j', (prefix) => {
    expect(() => validateTablePrefix(prefix)).not.toThrow();
  });

  it('keeps stores with different prefixes on one file apart', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const a = sqliteStore({ path: dir.file() }, { tablePrefix: 'a_' });
    const b = sqliteStore({ path: dir.file() }, { tablePrefix: 'b_' });
    await a.append('same-id', { expectedSeq: 0, messages: messages('a', 2), lease: null });
    expect(await b.load('same-id')).toBeNull();
    await b.append('same-id', { expectedSeq: 0, messages: messages('b', 1), lease: null });
    expect((await a.load('same-id'))?.session.headSeq).toBe(2);
    expect((await b.load('same-id'))?.session.headSeq).toBe(1);
    await a.close();
    await b.close();
  });

  it('rejects an unknown synchronous level, a bad busy timeout and a missing target', () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    // @ts-expect-error: not a level the store accepts
    expect(() => sqliteStore({ path: dir.file() }, { synchronous: 'OFF' })).toThrow(InvalidArgumentError);
    expect(() => sqliteStore({ path: dir.file() }, { busyTimeoutMs: -1 })).toThrow(InvalidArgumentError);
    // @ts-expect-error: neither path nor database
    expect(() => sqliteStore({})).toThrow(InvalidArgumentError);
  });
});
