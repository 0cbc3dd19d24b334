import type { AgentStore } from '@agentstore/core';

const WRITES = ['append', 'acquireLease'] as const;

/**
 * The store with every session id it writes to remembered, so a spec can delete what it created
 * and leave nothing behind in a database it shares with real data.
 */
export function trackSessions(
  store: AgentStore,
  created: Set<string> = new Set(),
): { store: AgentStore; created: Set<string> } {
  const tracked = { ...store } as AgentStore;
  for (const name of WRITES) {
    const method = store[name] as (sessionId: string, ...rest: unknown[]) => Promise<unknown>;
    (tracked as unknown as Record<string, unknown>)[name] = (sessionId: string, ...rest: unknown[]) => {
      if (typeof sessionId === 'string') created.add(sessionId);
      return method.call(store, sessionId, ...rest);
    };
  }
  return { store: tracked, created };
}

/**
 * Deletes every session in `created` (those that exist; ids that never made it are harmless). An
 * id the store refuses as invalid (a spec's hostile input) was never written.
 */
export async function deleteCreated(store: AgentStore, created: Set<string>): Promise<void> {
  const queue = [...created];
  created.clear();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
        await store.deleteSession(id).catch((error: unknown) => {
          if ((error as { code?: unknown } | null)?.code !== 'INVALID_ARGUMENT') throw error;
        });
      }
    }),
  );
}
