import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, roundTripCounters, withServer } from '@agentstore/core/testing';
import type { D1DatabaseLike, D1StatementLike } from '../d1-binding.ts';
import { d1Store } from '../d1-store.ts';
import { d1Corrupt, d1Floor, d1RawReader } from './capabilities.ts';

export { d1Corrupt, d1Floor, d1RawReader } from './capabilities.ts';

/** The binding with every call that reaches the database (`all`, `batch`) counted: one round trip each from a Worker. */
function countedBinding(db: D1DatabaseLike, tick: () => void): D1DatabaseLike {
  const unwrapped = new WeakMap<D1StatementLike, D1StatementLike>();
  const wrap = (statement: D1StatementLike): D1StatementLike => {
    const counted: D1StatementLike = {
      bind: (...values) => wrap(statement.bind(...values)),
      all: () => {
        tick();
        return statement.all();
      },
    } as D1StatementLike;
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
 * The D1 store under test on `binding` (a real D1 database: miniflare's, or one inside a Worker),
 * with capabilities written as plain SQL through the same binding. Runs in Workers too. Every
 * store it creates gets a counted view of the binding (`roundTrips`).
 */
export async function d1TestTarget(options: {
  binding: D1DatabaseLike;
  tablePrefix?: string;
  name?: string;
}): Promise<OpenTestTarget> {
  const storeOptions = options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {};
  const store = d1Store({ binding: options.binding }, storeOptions);
  await store.migrate();
  const counters = roundTripCounters();
  let tickFloor = () => {};
  const floor = d1Floor(
    countedBinding(options.binding, () => tickFloor()),
    store.tables,
  );
  tickFloor = counters.track(floor);
  return {
    name: options.name ?? 'd1',
    // A binding cannot cross processes: another process opens the same persisted database itself
    // (see the default export), and miniflare's engines on one file cannot share it at once.
    reopen: options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {},
    multiProcess: false,
    notes: [
      'D1 is reached from Node through miniflare’s proxy, ~2 ms per call: these times measure the proxy, not D1. ' +
        'Ratios to the floor still compare like with like; for times inside the Worker run `pnpm --filter @agentstore/d1 bench` (packages/d1/bench).',
    ],
    createStore: () => {
      let tick = () => {};
      const counted: AgentStore = d1Store(
        { binding: countedBinding(options.binding, () => tick()) },
        storeOptions,
      );
      tick = counters.track(counted);
      return counted;
    },
    capabilities: {
      raw: d1RawReader(options.binding, store.tables),
      corrupt: d1Corrupt(options.binding, store.tables),
      floor,
    },
    roundTrips: counters.count,
    roundTripUnit: 'D1 calls (all() or batch(); one round trip each from a Worker)',
    async describe() {
      // D1 refuses sqlite_version() ("not authorized"), so report what the binding is.
      return 'Cloudflare D1 (workerd/miniflare binding)';
    },
    async close() {
      await store.close();
    },
  };
}

/**
 * What the kit and the tools open, from Node: a miniflare D1 persisted in `persist` (another
 * process's, from a target's `reopen`), or in a fresh temp dir removed on close. Uses
 * `@agentstore/servers`.
 */
export default async function openD1Target(
  options: { persist?: string; tablePrefix?: string; name?: string } = {},
): Promise<OpenTestTarget> {
  const { launchD1, tempDir } = await import('@agentstore/servers');
  const { rmSync } = await import('node:fs');
  const fresh = options.persist === undefined;
  const persist = options.persist ?? tempDir('d1');
  const server = await launchD1({ persist });
  try {
    const { persist: _, ...rest } = options;
    const target = await d1TestTarget({ ...rest, binding: server.info.db });
    return withServer(
      {
        ...target,
        module: import.meta.url,
        reopen: { ...target.reopen, persist },
        dataDir: persist,
        async durabilitySettings() {
          return {
            settings: { engine: 'miniflare (workerd) D1, persisted to a local directory' },
            dataDir: persist,
          };
        },
      },
      {
        owned: false,
        async stop() {
          await server.stop();
          if (fresh) rmSync(persist, { recursive: true, force: true });
        },
      },
    );
  } catch (error) {
    await server.stop();
    throw error;
  }
}
