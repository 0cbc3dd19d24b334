import type { AgentStore } from '@agentstore/core';

const METHODS = [
  'load',
  'append',
  'acquireLease',
  'renewLease',
  'releaseLease',
  'listSessions',
  'deleteSession',
] as const;

/** The store with every contract method counted: for a backend whose driver is out of reach. */
export function countStoreCalls(store: AgentStore): { store: AgentStore; count: () => number } {
  let calls = 0;
  const counted = { ...store } as AgentStore;
  for (const name of METHODS) {
    const method = store[name] as (...args: unknown[]) => Promise<unknown>;
    (counted as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls += 1;
      return method.apply(store, args);
    };
  }
  return { store: counted, count: () => calls };
}
