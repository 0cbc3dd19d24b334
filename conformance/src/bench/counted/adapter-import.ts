import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface AdapterEntry<Module> {
  module: Module;
  /** `require` as seen from the adapter: its driver, the one the user installed beside it. */
  requireFromAdapter: NodeJS.Require;
}

/**
 * Imports an entry of an adapter installed in the user's project (resolved from the current
 * directory, as the backend registry does), plus a `require` that finds the adapter's driver.
 */
export async function importAdapterEntry<Module>(specifier: string): Promise<AdapterEntry<Module>> {
  let resolved: string;
  try {
    resolved = createRequire(join(process.cwd(), 'noop.js')).resolve(specifier);
  } catch (error) {
    throw new Error(`${specifier} could not be found from ${process.cwd()}`, { cause: error });
  }
  return {
    module: (await import(pathToFileURL(resolved).href)) as Module,
    requireFromAdapter: createRequire(resolved),
  };
}
