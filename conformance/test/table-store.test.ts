import { describe, expect, it } from 'vitest';
import { describeAgentStoreConformance } from '../src/index.ts';
import { tableStore } from './support/table-store.ts';

// The correct table store offers every capability, so every check of the kit runs against it,
// including the raw-reader, corrupt-record and perf-gate ones the memory stores cannot run.
const backend = tableStore({ roundTripUs: 250 });

const target = {
  name: 'table store',
  createStore: () => backend.store,
  // One backend shared by every spec file, as a real database would be.
  destroyStore: () => {},
  capabilities: backend.capabilities,
  // Counted per store and floor, as an adapter's OpenTestTarget counts them.
  roundTrips: backend.roundTrips,
};
describeAgentStoreConformance(target);

// Suites run in order, each deleting what it wrote when it ends: by now the database is empty.
describe('after every spec', () => {
  it('the kit left nothing behind in the shared database', async () => {
    expect((await backend.store.listSessions({ limit: 10_000 })).sessions).toEqual([]);
    expect(await backend.capabilities.raw.messages('anything')).toEqual([]);
  });
});
