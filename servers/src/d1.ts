import type { LaunchedServer } from './process-tools.ts';

/**
 * The part of the D1 binding miniflare hands out that tests use, as a structural type, so these
 * declarations never need miniflare's (or `@cloudflare/workers-types`') types installed.
 * Miniflare's `D1Database` fits it, and it fits `@agentstore/d1`'s `D1DatabaseLike`.
 */
export interface D1StatementHandle {
  bind(...values: unknown[]): D1StatementHandle;
  first<Row = Record<string, unknown>>(): Promise<Row | null>;
  all<Row = Record<string, unknown>>(): Promise<{ results: Row[] }>;
  run(): Promise<unknown>;
}

/** A D1 database as reached from Node through miniflare's proxy. */
export interface D1DatabaseHandle {
  prepare(query: string): D1StatementHandle;
  /** Runs the statements in one transaction. */
  batch<Row = unknown>(statements: D1StatementHandle[]): Promise<{ results: Row[] }[]>;
  exec(query: string): Promise<unknown>;
}

/** The part of a `Miniflare` instance tests use: requests to the worker running beside the database. */
export interface MiniflareHandle {
  dispatchFetch(input: string, init?: RequestInit): Promise<Response>;
  dispose(): Promise<void>;
}

export interface D1LaunchInfo {
  miniflare: MiniflareHandle;
  /** The `DB` binding, reached from Node through miniflare's proxy (~2 ms per call). */
  db: D1DatabaseHandle;
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
    const db: D1DatabaseHandle = await miniflare.getD1Database('DB');
    // Miniflare's Response is undici's own class; at runtime it is the same fetch Response.
    const handle = miniflare as unknown as MiniflareHandle;
    return {
      info: { miniflare: handle, db, binding: 'DB' },
      owned: true,
      stop: () => miniflare.dispose(),
    };
  } catch (error) {
    await miniflare.dispose().catch(() => {});
    throw error;
  }
}
