import type { Database } from 'better-sqlite3';

type AnyFunction = (...args: unknown[]) => unknown;
const EXECUTE = new Set(['run', 'get', 'all', 'iterate']);
const TRANSACTION_MODES = ['deferred', 'immediate', 'exclusive'] as const;

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
 * The connection with every statement it executes counted (BEGIN and COMMIT included): SQLite
 * runs in-process, so a statement is what stands in for a round trip.
 */
export function countedDatabase(db: Database, tick: (n: number) => void): Database {
  return new Proxy(db, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'prepare')
        return (...args: unknown[]) =>
          countedStatement((value as AnyFunction).apply(target, args) as object, tick);
      if (property === 'transaction')
        return (...args: unknown[]) =>
          countedTransaction(
            (value as AnyFunction).apply(target, args) as AnyFunction & Record<string, unknown>,
            tick,
          );
      if (property === 'exec')
        return (...args: unknown[]) => {
          tick(1);
          return (value as AnyFunction).apply(target, args);
        };
      return (...args: unknown[]) => (value as AnyFunction).apply(target, args);
    },
  });
}
