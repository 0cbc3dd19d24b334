import type { AgentStore } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import { launchD1 } from '../../launchers/d1.ts';
import { importAdapterEntry } from './adapter-import.ts';
import type { CountedBackend } from './types.ts';

/** The binding surface the D1 store and floor use (prepare/bind/all/batch), as a structural type. */
interface D1Statement {
  bind(...values: unknown[]): D1Statement;
  all(): Promise<{ results: unknown[] }>;
}
interface D1Binding {
  prepare(sql: string): D1Statement;
  batch(statements: D1Statement[]): Promise<{ results: unknown[] }[]>;
}

interface D1Adapter {
  d1Store(
    connection: { binding: D1Binding },
    options: { tablePrefix?: string },
  ): AgentStore & { migrate(): Promise<unknown>; tables: unknown };
}
interface D1Testing {
  d1Floor(db: D1Binding, tables: unknown): RawAppendFloor;
}

/** The binding with every call that reaches the database (`all`, `batch`) counted. */
function countedBinding(db: D1Binding, tick: () => void): D1Binding {
  const unwrapped = new WeakMap<D1Statement, D1Statement>();
  const wrap = (statement: D1Statement): D1Statement => {
    const counted: D1Statement = {
      bind: (...values) => wrap(statement.bind(...values)),
      all: () => {
        tick();
        return statement.all();
      },
    };
    unwrapped.set(counted, statement);
    return counted;
  };
  return {
    prepare: (sql) => wrap(db.prepare(sql)),
    batch: (statements) => {
      tick();
      return db.batch(statements.map((statement) => unwrapped.get(statement) ?? statement));
    },
  };
}

/**
 * A binding cannot cross from the target to us, so a second miniflare opens the same persisted
 * database, and the store on it gets a binding whose calls are counted: each `all()` or
 * `batch()` is one call to the database (one round trip from a deployed Worker).
 */
export async function countedD1(reopen: Record<string, string | boolean>): Promise<CountedBackend> {
  const { persist } = reopen;
  if (typeof persist !== 'string')
    throw new Error('only a persisted D1 database can be reopened to count calls');
  const tablePrefix = typeof reopen.tablePrefix === 'string' ? reopen.tablePrefix : undefined;
  const { module: adapter } = await importAdapterEntry<D1Adapter>('@agentstore/d1');
  const { module: testing } = await importAdapterEntry<D1Testing>('@agentstore/d1/testing');
  const server = await launchD1({ persist });
  let calls = 0;
  const binding = countedBinding(server.info.db as unknown as D1Binding, () => {
    calls += 1;
  });
  try {
    const store = adapter.d1Store({ binding }, tablePrefix !== undefined ? { tablePrefix } : {});
    await store.migrate();
    return {
      method: 'driver',
      unit: 'D1 calls (all() or batch(); one round trip each from a Worker)',
      store,
      floor: testing.d1Floor(binding, store.tables),
      count: () => calls,
      async close() {
        try {
          await store.close();
        } finally {
          await server.stop();
        }
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
