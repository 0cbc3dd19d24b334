import type { AgentStore } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import { importAdapterEntry } from './adapter-import.ts';
import type { CountedBackend } from './types.ts';

/** The parts of a better-sqlite3 `Database` the bench touches (the kit does not depend on it). */
interface SqliteDatabase {
  pragma(source: string): unknown;
  close(): unknown;
}
type SqliteConstructor = new (path: string, options: { timeout: number }) => SqliteDatabase;

interface SqliteAdapter {
  sqliteStore(target: { database: SqliteDatabase }, options: { tablePrefix?: string }): AgentStore;
}
interface SqliteTesting {
  rawFloor(
    target: { connection: { database: SqliteDatabase }; tablePrefix?: string },
    db: SqliteDatabase,
  ): RawAppendFloor;
}

const EXECUTE = new Set(['run', 'get', 'all', 'iterate']);
const TRANSACTION_MODES = ['deferred', 'immediate', 'exclusive'] as const;

type AnyFunction = (...args: unknown[]) => unknown;

/** A prepared statement whose executions count; methods that return the statement keep the wrapper. */
function countedStatement(statement: object, tick: (n: number) => void): object {
  const proxy: object = new Proxy(statement, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof property === 'string' && EXECUTE.has(property)) tick(1);
        const result = (value as AnyFunction).apply(target, args);
        return result === target ? proxy : result;
      };
    },
  });
  return proxy;
}

/** `db.transaction(fn)`, whose every call runs BEGIN and COMMIT (or ROLLBACK) around `fn`. */
function countedTransaction(transaction: AnyFunction & Record<string, unknown>, tick: (n: number) => void) {
  const wrap =
    (run: AnyFunction) =>
    (...args: unknown[]) => {
      tick(2);
      return run(...args);
    };
  const counted = wrap(transaction) as AnyFunction & Record<string, unknown>;
  for (const mode of TRANSACTION_MODES) counted[mode] = wrap(transaction[mode] as AnyFunction);
  counted.default = counted;
  return counted;
}

/**
 * A better-sqlite3 connection of our own on the target's file, same pragmas as the store's own
 * (WAL, the target's `synchronous`). SQLite runs in-process: there is no round trip, so what is
 * counted is statements executed, BEGIN and COMMIT included.
 */
export async function countedSqlite(reopen: Record<string, string | boolean>): Promise<CountedBackend> {
  const { path } = reopen;
  if (typeof path !== 'string')
    throw new Error('the sqlite target has no file to reopen (an in-memory database)');
  const tablePrefix = typeof reopen.tablePrefix === 'string' ? reopen.tablePrefix : undefined;
  const synchronous = typeof reopen.synchronous === 'string' ? reopen.synchronous : 'FULL';
  if (!/^[A-Za-z]+$/.test(synchronous)) throw new Error(`unexpected synchronous mode ${synchronous}`);
  const { module: adapter, requireFromAdapter } =
    await importAdapterEntry<SqliteAdapter>('@agentstore/sqlite');
  const { module: testing } = await importAdapterEntry<SqliteTesting>('@agentstore/sqlite/testing');
  const Database = requireFromAdapter('better-sqlite3') as SqliteConstructor;
  const raw = new Database(path, { timeout: 5000 });
  raw.pragma('journal_mode = WAL');
  raw.pragma(`synchronous = ${synchronous}`);
  let statements = 0;
  const tick = (n: number) => {
    statements += n;
  };
  const database = new Proxy(raw, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'prepare') {
        return (...args: unknown[]) =>
          countedStatement((value as AnyFunction).apply(target, args) as object, tick);
      }
      if (property === 'transaction') {
        return (...args: unknown[]) =>
          countedTransaction(
            (value as AnyFunction).apply(target, args) as AnyFunction & Record<string, unknown>,
            tick,
          );
      }
      if (property === 'exec') {
        return (...args: unknown[]) => {
          tick(1);
          return (value as AnyFunction).apply(target, args);
        };
      }
      return (...args: unknown[]) => (value as AnyFunction).apply(target, args);
    },
  });
  const options = tablePrefix !== undefined ? { tablePrefix } : {};
  const store = adapter.sqliteStore({ database }, options);
  return {
    method: 'driver',
    unit: 'SQLite statements executed, BEGIN/COMMIT included (in-process: no network round trip)',
    store,
    floor: testing.rawFloor({ connection: { database }, ...options }, database),
    count: () => statements,
    async close() {
      await store.close();
      raw.close();
    },
  };
}
