import type { Miniflare } from 'miniflare';
import type { LaunchedServer } from './process-tools.ts';

/** The D1 binding miniflare hands out (its own workers-types `D1Database`). */
export type MiniflareD1Database = Awaited<ReturnType<Miniflare['getD1Database']>>;

export interface D1LaunchInfo {
  miniflare: Miniflare;
  /** The `DB` binding, reached from Node through miniflare's proxy (~2 ms per call). */
  db: MiniflareD1Database;
  /** Binding name of the database inside the worker. */
  binding: 'DB';
}

export interface LaunchD1Options {
  /** Directory that keeps the database between launches; in memory when absent. */
  persist?: string;
  /** Worker script (one ES module, e.g. a bundle) to run beside the database; a stub answering "ok" by default. */
  script?: string;
  compatibilityDate?: string;
  /** e.g. `['nodejs_compat']` for a script that imports `node:*` modules. */
  compatibilityFlags?: string[];
}

const STUB_WORKER = 'export default { fetch() { return new Response("ok"); } };';
const COMPATIBILITY_DATE = '2025-09-01';

/**
 * A real D1 database (workerd's SQLite-backed D1, as `wrangler dev` runs it) in a Miniflare
 * instance. Miniflare is an optional peer of this package, so it is loaded only when called.
 */
export async function launchD1(options: LaunchD1Options = {}): Promise<LaunchedServer<D1LaunchInfo>> {
  let miniflareModule: typeof import('miniflare');
  try {
    miniflareModule = await import('miniflare');
  } catch (error) {
    throw new Error(
      'launchD1 needs the "miniflare" package: install it as a devDependency (npm i -D miniflare)',
      {
        cause: error,
      },
    );
  }
  const miniflare = new miniflareModule.Miniflare({
    modules: true,
    script: options.script ?? STUB_WORKER,
    compatibilityDate: options.compatibilityDate ?? COMPATIBILITY_DATE,
    compatibilityFlags: options.compatibilityFlags ?? [],
    d1Databases: { DB: 'agentstore-d1' },
    ...(options.persist !== undefined ? { d1Persist: options.persist } : {}),
  });
  try {
    const db = await miniflare.getD1Database('DB');
    return {
      info: { miniflare, db, binding: 'DB' },
      owned: true,
      stop: () => miniflare.dispose(),
    };
  } catch (error) {
    await miniflare.dispose().catch(() => {});
    throw error;
  }
}
