import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * Bundles a TypeScript entry (and the workspace sources it imports, through the
 * `@agentstore/source` condition) into one ES module for workerd. Uses rolldown, which vite 8
 * (vitest's bundler) ships: it is reached through vitest → vite rather than declared again.
 */

interface RolldownPlugin {
  name: string;
  resolveId?: (source: string) => string | { id: string; external?: boolean } | null;
  load?: (id: string) => string | null;
}

interface Rolldown {
  rolldown(options: {
    input: string;
    platform: 'neutral';
    cwd?: string;
    resolve?: { conditionNames?: string[] };
    external?: (string | RegExp)[];
    plugins?: RolldownPlugin[];
    logLevel?: 'silent' | 'warn';
  }): Promise<{
    generate(options: {
      format: 'esm';
    }): Promise<{ output: { type: string; code?: string; imports?: string[] }[] }>;
    close(): Promise<void>;
  }>;
}

let loaded: Promise<Rolldown> | undefined;

function loadRolldown(): Promise<Rolldown> {
  loaded ??= (async () => {
    const fromHere = createRequire(import.meta.url);
    const fromVitest = createRequire(fromHere.resolve('vitest/package.json'));
    const fromVite = createRequire(fromVitest.resolve('vite/package.json'));
    return (await import(pathToFileURL(fromVite.resolve('rolldown')).href)) as Rolldown;
  })();
  return loaded;
}

export interface BundleOptions {
  /** Module ids to replace with the given source (e.g. a stub for `vitest`). */
  replace?: Record<string, string>;
  /** Module ids to resolve to the given absolute file (a dependency installed elsewhere in the workspace). */
  alias?: Record<string, string>;
  /** Ids left as imports for workerd to provide (`cloudflare:workers`, `node:*` with nodejs_compat). */
  external?: (string | RegExp)[];
}

export interface Bundle {
  code: string;
  /** Modules the bundle still imports (provided by the runtime). */
  imports: string[];
}

const CONDITIONS = ['@agentstore/source', 'workerd', 'worker', 'import', 'module', 'default'];
const VIRTUAL = '\0bundle-replace:';

export async function bundleWorker(entry: string, options: BundleOptions = {}): Promise<Bundle> {
  const { rolldown } = await loadRolldown();
  const replace = options.replace ?? {};
  const alias = options.alias ?? {};
  const build = await rolldown({
    input: entry,
    platform: 'neutral',
    resolve: { conditionNames: CONDITIONS },
    external: options.external ?? [],
    logLevel: 'warn',
    plugins: [
      {
        name: 'replace-modules',
        resolveId: (source) => (source in replace ? `${VIRTUAL}${source}` : (alias[source] ?? null)),
        load: (id) => (id.startsWith(VIRTUAL) ? (replace[id.slice(VIRTUAL.length)] ?? null) : null),
      },
    ],
  });
  try {
    const { output } = await build.generate({ format: 'esm' });
    const chunks = output.filter((o) => o.type === 'chunk');
    if (chunks.length !== 1 || !chunks[0]?.code) throw new Error(`expected one chunk, got ${chunks.length}`);
    return { code: chunks[0].code, imports: chunks[0].imports ?? [] };
  } finally {
    await build.close();
  }
}
