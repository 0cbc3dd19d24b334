import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Imports an adapter's `./testing` entry from the user's project (the current directory, and up),
 * not from the kit's own dependencies: the kit depends on no adapter, it measures the ones you
 * have installed.
 */
export async function importAdapterTesting<Module>(packageName: string): Promise<Module> {
  const specifier = `${packageName}/testing`;
  let resolved: string;
  try {
    resolved = createRequire(join(process.cwd(), 'noop.js')).resolve(specifier);
  } catch (error) {
    throw new Error(`${specifier} could not be found from ${process.cwd()}: install ${packageName} there`, {
      cause: error,
    });
  }
  return (await import(pathToFileURL(resolved).href)) as Module;
}
