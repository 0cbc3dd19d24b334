import type { OpenTestTarget } from '@agentstore/core/testing';
import type { D1DatabaseLike } from '../d1-binding.ts';
import { d1Store } from '../d1-store.ts';
import { d1Corrupt, d1Floor, d1RawReader } from './capabilities.ts';

export { d1Corrupt, d1Floor, d1RawReader } from './capabilities.ts';

/**
 * The D1 store under test on `binding` (a real D1 database: miniflare's, or one inside a Worker),
 * with capabilities written as plain SQL through the same binding. Runs in Workers too.
 */
export async function d1TestTarget(options: {
  binding: D1DatabaseLike;
  tablePrefix?: string;
  name?: string;
}): Promise<OpenTestTarget> {
  const storeOptions = options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {};
  const store = d1Store({ binding: options.binding }, storeOptions);
  await store.migrate();
  return {
    name: options.name ?? 'd1',
    // A binding cannot cross processes; another process opens the same persisted database itself.
    reopen: options.tablePrefix !== undefined ? { tablePrefix: options.tablePrefix } : {},
    createStore: () => d1Store({ binding: options.binding }, storeOptions),
    capabilities: {
      raw: d1RawReader(options.binding, store.tables),
      corrupt: d1Corrupt(options.binding, store.tables),
      floor: d1Floor(options.binding, store.tables),
    },
    async describe() {
      // D1 refuses sqlite_version() ("not authorized"), so report what the binding is.
      return 'Cloudflare D1 (workerd/miniflare binding)';
    },
    async close() {
      await store.close();
    },
  };
}
