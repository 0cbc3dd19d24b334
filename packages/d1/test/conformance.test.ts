import { describeAgentStoreConformance, type RawAppendFloor, type RawReader } from '@agentstore/conformance';
import { afterAll, beforeAll } from 'vitest';
import { d1Store } from '../src/index.ts';
import { d1Corrupt, d1Floor, d1RawReader } from './d1-capabilities.ts';
import { launchTestD1 } from './launch.ts';

/**
 * The whole conformance kit against a real D1 database (workerd's, in Miniflare), reached from
 * Node through miniflare's proxy. Raw reader, corrupt and floor use plain SQL on the same binding.
 */
let server: Awaited<ReturnType<typeof launchTestD1>> | undefined;
let backend:
  | { raw: RawReader; corrupt: (id: string, seq: number) => Promise<void>; floor: RawAppendFloor }
  | undefined;

beforeAll(async () => {
  server = await launchTestD1();
  const store = d1Store({ binding: server.db });
  await store.migrate();
  backend = {
    raw: d1RawReader(server.db, store.tables),
    corrupt: d1Corrupt(server.db, store.tables),
    floor: d1Floor(server.db, store.tables),
  };
});
afterAll(() => server?.stop());

// The kit takes its capabilities when the suites are declared; the database starts in beforeAll.
const up = () => {
  if (!server || !backend) throw new Error('the D1 database is not up yet');
  return { db: server.db, ...backend };
};

describeAgentStoreConformance({
  name: 'd1',
  createStore: () => d1Store({ binding: up().db }),
  capabilities: {
    raw: { session: (id) => up().raw.session(id), messages: (id) => up().raw.messages(id) },
    corrupt: (id, seq) => up().corrupt(id, seq),
    floor: { append: (id, expectedSeq, messages) => up().floor.append(id, expectedSeq, messages) },
  },
});
