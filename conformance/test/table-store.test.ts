import { describeAgentStoreConformance } from '../src/index.ts';
import { tableStore } from './support/table-store.ts';

// The correct table store offers every capability, so every check of the kit runs against it,
// including the raw-reader, corrupt-record and perf-gate ones the memory stores cannot run.
const backend = tableStore({ roundTripUs: 250 });

describeAgentStoreConformance({
  name: 'table store',
  createStore: () => backend.store,
  // One backend shared by every spec file, as a real database would be.
  destroyStore: () => {},
  capabilities: backend.capabilities,
});
