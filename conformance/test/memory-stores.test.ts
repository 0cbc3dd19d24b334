import { memoryStore } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import { describeAgentStoreConformance } from '../src/index.ts';

// The reference implementation must pass every check it can run.
describeAgentStoreConformance({ name: 'durableMemoryStore()', createStore: () => durableMemoryStore() });
// Not durable: everything but the checks that need durability.
describeAgentStoreConformance({ name: 'memoryStore()', createStore: () => memoryStore(), durable: false });
