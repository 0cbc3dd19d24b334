// A target module for agentstore-bench: the durable in-process reference store, as a baseline
// that measures what durable mode costs the loop with no I/O at all.
//   agentstore-bench --target node_modules/@agentstore/conformance/dist/bench/memory-target.js,…

import type { OpenTestTarget } from '@agentstore/core/testing';
import { durableMemoryStore } from '@agentstore/core/testing';

export default function memoryTarget(): OpenTestTarget {
  const store = durableMemoryStore();
  return {
    name: 'memory (test store)',
    // One store shared by every caller, living in this process only.
    createStore: () => ({ ...store, close: async () => {} }),
    multiProcess: false,
    notes: [
      'in-process test store: no I/O and no floor; its durable overhead is the bookkeeping of durable mode itself.',
    ],
    describe: async () => 'in-process memory (durable test store)',
    close: () => store.close(),
  };
}
