import type { OpenBackend } from '../../backends/registry.ts';
import { countedD1 } from './d1.ts';
import { countedDynamoDb } from './dynamodb.ts';
import { countedPostgres } from './postgres.ts';
import { countedRedis } from './redis.ts';
import { countedSqlite } from './sqlite.ts';
import { countStoreCalls } from './store-calls.ts';
import type { CountedBackend } from './types.ts';

export { countStoreCalls } from './store-calls.ts';
export type { CountedBackend } from './types.ts';

/** `store.*` calls on a store of the target itself: the honest fallback when no driver is in reach. */
async function storeCallCounter(backend: OpenBackend): Promise<CountedBackend> {
  const target = backend.target;
  const inner = await target.createStore();
  const { store, count } = countStoreCalls(inner);
  return {
    method: 'store-calls',
    unit: 'store.* calls (no driver to count at)',
    store,
    floor: null,
    count,
    close: async () => {
      await (target.destroyStore ? target.destroyStore(inner) : inner.close());
    },
  };
}

/**
 * Opens a counted store on the backend's data. Falls back to counting `store.*` calls (and
 * says so in the unit) when there is no driver (the memory store) or reopening on a driver of
 * our own failed, whose reason is returned for the report.
 */
export async function openCountedBackend(
  backend: OpenBackend,
): Promise<{ counted: CountedBackend; fallbackReason: string | null }> {
  const reopen = backend.handle.options;
  const open: Record<string, (() => Promise<CountedBackend>) | undefined> = {
    sqlite: () => countedSqlite(reopen),
    postgres: () => countedPostgres(reopen),
    redis: () => countedRedis(reopen),
    dynamodb: () => countedDynamoDb(reopen),
    d1: () => countedD1(reopen),
  };
  const opener = open[backend.name];
  if (!opener) {
    return { counted: await storeCallCounter(backend), fallbackReason: null };
  }
  try {
    return { counted: await opener(), fallbackReason: null };
  } catch (error) {
    return {
      counted: await storeCallCounter(backend),
      fallbackReason: `the driver could not be reached (${(error as Error).message})`,
    };
  }
}
