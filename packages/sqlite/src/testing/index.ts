// First: refuses a Node whose better-sqlite3 would crash, before the driver is loaded.
import '../node-guard.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, roundTripCounters } from '@agentstore/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../open-database.ts';
import type { SynchronousMode } from '../options.ts';
import { sqliteStore } from '../sqlite-store.ts';
import { rawFloor, sqliteCapabilities } from './capabilities.ts';
import { countedDatabase } from './round-trips.ts';

export { type CapabilityTarget, corrupter, rawFloor, rawReader, sqliteCapabilities } from './capabilities.ts';

export interface SqliteTargetOptions {
  tablePrefix?: string;
  synchronous?: SynchronousMode;
  name?: string;
}

/**
 * The SQLite store under test on a file (or, with `memory: true`, one `:memory:` database shared by
 * every store, which is then not durable), with raw-SQL capabilities on their own connection.
 * Every store it creates runs on a connection of its own whose statements are counted
 * (`roundTrips`).
 */
export async function sqliteTestTarget(
  options: ({ path: string } | { memory: true }) & SqliteTargetOptions,
): Promise<OpenTestTarget> {
  const shared = 'memory' in options ? new BetterSqlite3(':memory:') : null;
  const path = shared ? null : (options as { path: string }).path;
  const connection = shared ? { database: shared } : { path: path! };
  const storeOptions = {
    ...(options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {}),
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
  };
  const counters = roundTripCounters();
  const capabilityTarget = {
    connection,
    tablePrefix: options.tablePrefix,
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
  };
  const capabilities = sqliteCapabilities(capabilityTarget);
  // The floor again, on a counted view of the capabilities' connection.
  let tickFloor: (n: number) => void = () => {};
  const floor = rawFloor(
    capabilityTarget,
    countedDatabase(capabilities.db, (n) => tickFloor(n)),
  );
  const trackFloor = counters.track(floor);
  tickFloor = (n) => {
    for (let i = 0; i < n; i++) trackFloor();
  };
  const label = shared ? ':memory:' : `WAL file, synchronous ${options.synchronous ?? 'FULL'}`;
  return {
    name: options.name ?? `sqlite (${label})`,
    module: import.meta.url,
    reopen: {
      ...(path ? { path } : { memory: true }),
      ...(options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {}),
      ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
    },
    durable: shared === null,
    // An in-memory database lives in one process.
    multiProcess: shared === null,
    createStore: () => {
      let tick: () => void = () => {};
      const own = shared ? null : openDatabase(connection as { path: string }, storeOptions).database;
      const database = countedDatabase(shared ?? own!, (n) => {
        for (let i = 0; i < n; i++) tick();
      });
      const store = sqliteStore({ database }, storeOptions);
      const owned: AgentStore = {
        ...store,
        async close() {
          await store.close();
          own?.close();
        },
      };
      tick = counters.track(owned);
      return owned;
    },
    capabilities: { ...capabilities, floor },
    roundTrips: counters.count,
    roundTripUnit: 'SQLite statements executed, BEGIN/COMMIT included (in-process: no network round trip)',
    notes: [
      'in-process: "round trips" are SQLite statements executed; each append commits with an fsync.',
      'better-sqlite3 is synchronous: a commit blocks the event loop, so write #2 cannot overlap the next model request as it does on a networked store.',
    ],
    ...(path ? { dataDir: join(path, '..') } : {}),
    async durabilitySettings() {
      // Read back from a connection opened as the store's are (the capabilities' own).
      const pragma = (name: string) => String(capabilities.db.pragma(name, { simple: true }));
      const synchronousNames = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
      const level = Number(pragma('synchronous'));
      return {
        settings: {
          journal_mode: pragma('journal_mode'),
          synchronous: synchronousNames[level] ?? String(level),
        },
        ...(path ? { dataDir: join(path, '..') } : {}),
      };
    },
    async describe() {
      const version = (capabilities.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
      return `SQLite ${version} (better-sqlite3), ${label}`;
    },
    async close() {
      capabilities.close();
      shared?.close();
    },
  };
}

/**
 * What `agentstore-conformance`, `agentstore-torture` and `agentstore-bench` open: without
 * options, a fresh database file in a temp dir (removed on close); with a target's `reopen`, the
 * same file from another process.
 */
export default async function openSqliteTarget(
  options?: (({ path: string } | { memory: true }) & SqliteTargetOptions) | SqliteTargetOptions,
): Promise<OpenTestTarget> {
  if (options && ('path' in options || 'memory' in options))
    return sqliteTestTarget(options as Parameters<typeof sqliteTestTarget>[0]);
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-sqlite-'));
  const target = await sqliteTestTarget({ ...options, path: join(dir, 'agent.db') });
  return {
    ...target,
    async close() {
      try {
        await target.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
