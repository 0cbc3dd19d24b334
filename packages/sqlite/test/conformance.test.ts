import { describeAgentStoreConformance } from '@agentstore/conformance';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { sqliteCapabilities } from './capabilities.ts';
import { tempDatabaseDir } from './helpers.ts';

// A real WAL file at the default durability (synchronous FULL); the kit's raw reader, corrupter
// and floor use their own connection to it.
const dir = tempDatabaseDir();
const path = dir.file('conformance.db');
const fileCapabilities = sqliteCapabilities({ connection: { path } });

describeAgentStoreConformance({
  name: 'sqlite (WAL file, synchronous FULL)',
  createStore: () => sqliteStore({ path }),
  capabilities: fileCapabilities,
});

// The same kit on `:memory:`: one database handed to every store (which must not close it).
// Nothing there survives the process, so the store says `durable: false` and the kit skips the
// checks that need durability (crash matrix through run(), the run() perf gate).
const memory = new BetterSqlite3(':memory:');
const memoryCapabilities = sqliteCapabilities({ connection: { database: memory } });

describeAgentStoreConformance({
  name: 'sqlite (:memory:)',
  createStore: () => sqliteStore({ database: memory }),
  capabilities: memoryCapabilities,
  durable: false,
});

afterAll(() => {
  fileCapabilities.close();
  memory.close();
  dir.cleanup();
});
