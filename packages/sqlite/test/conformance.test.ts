import { describeAgentStoreConformance } from '@agentstore/conformance';
import { afterAll } from 'vitest';
import { sqliteTestTarget } from '../src/testing/index.ts';
import { tempDatabaseDir } from './helpers.ts';

// A real WAL file at the default durability (synchronous FULL); the kit's raw reader, corrupter
// and floor use their own connection to it.
const dir = tempDatabaseDir();
const file = await sqliteTestTarget({ path: dir.file('conformance.db') });
describeAgentStoreConformance(file);

// The same kit on `:memory:`: one database handed to every store (which must not close it).
// Nothing there survives the process, so the store says `durable: false` and the kit skips the
// checks that need durability (crash matrix through run(), the run() perf gate).
const memory = await sqliteTestTarget({ memory: true });
describeAgentStoreConformance(memory);

afterAll(async () => {
  await file.close();
  await memory.close();
  dir.cleanup();
});
