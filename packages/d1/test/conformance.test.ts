import { describeAgentStoreConformance } from '@agentstore/conformance';
import { afterAll, beforeAll } from 'vitest';
import { type D1AgentStore, d1Store } from '../src/index.ts';
import { d1Corrupt, d1Floor, d1RawReader } from './d1-capabilities.ts';
import { launchTestD1 } from './launch.ts';

/**
 * The whole conformance kit against a real D1 database (workerd's, in Miniflare), reached from
 * Node through miniflare's proxy. Raw reader, corrupt and floor use plain SQL on the same binding.
 */
let server: Awaited<ReturnType<typeof launchTestD1>> | undefined;
let tables: D1AgentStore['tables'] | undefined;

beforeAll(async () => {
  server = await launchTestD1();
  const store = d1Store({ binding: server.db });
  await store.migrate();
  tables = store.tables;
});
afterAll(() => server?.stop());

const db = () => {
  if (!server || !tables) throw new Error('the D1 database is not up yet');
  return { db: server.db, tables };
};

describeAgentStoreConformance({
  name: 'd1',
  createStore: () => d1Store({ binding: db().db }),
  capabilities: {
    raw: {
      session: (id) => d1RawReader(db().db, db().tables).session(id),
      messages: (id) => d1RawReader(db().db, db().tables).messages(id),
    },
    corrupt: (id, seq) => d1Corrupt(db().db, db().tables)(id, seq),
    floor: {
      append: (id, expectedSeq, messages) => d1Floor(db().db, db().tables).append(id, expectedSeq, messages),
    },
  },
});
