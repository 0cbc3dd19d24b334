import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgentStoreError } from '../errors.ts';
import type { AgentStore } from '../store/contract.ts';

/**
 * How the inspector opens a store from a URL: the scheme names the adapter package, which the
 * CLI loads from the user's project (core depends on no driver) and asks for its
 * `storeFromUrl(url)`. D1 has no URL: a binding exists only inside a Worker (or miniflare /
 * wrangler's platform proxy), so D1 is inspected through a store module.
 */
export const STORE_URL_ADAPTERS: readonly {
  schemes: readonly string[];
  package: string;
  driver: string;
  example: string;
}[] = [
  {
    schemes: ['postgres:', 'postgresql:'],
    package: '@agentstore/postgres',
    driver: 'pg',
    example: 'postgres://user@host:5432/db?schema=public&tablePrefix=agentstore_',
  },
  {
    schemes: ['redis:', 'rediss:'],
    package: '@agentstore/redis',
    driver: 'ioredis',
    example: 'redis://host:6379/0?keyPrefix=agentstore:',
  },
  {
    schemes: ['dynamodb:'],
    package: '@agentstore/dynamodb',
    driver: '@aws-sdk/client-dynamodb',
    example: 'dynamodb://TABLE?region=eu-west-1&endpoint=http://127.0.0.1:8000',
  },
  {
    schemes: ['sqlite:', 'file:'],
    package: '@agentstore/sqlite',
    driver: 'better-sqlite3',
    example: 'sqlite:./agent.db, or a path to the file',
  },
];

const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

export class StoreUrlError extends Error {}

/** What an inspector argument names: a store module, or a store URL (a bare path is SQLite). */
export function classifyStoreArgument(
  argument: string,
):
  | { kind: 'module'; path: string }
  | { kind: 'url'; url: string; adapter: (typeof STORE_URL_ADAPTERS)[number] } {
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(argument)?.[1]?.toLowerCase();
  // A Windows drive letter (C:\…) is a path, not a scheme.
  if (scheme !== undefined && scheme.length > 2) {
    const adapter = STORE_URL_ADAPTERS.find((a) => a.schemes.includes(scheme));
    if (!adapter) {
      throw new StoreUrlError(
        `unknown store URL scheme ${scheme} in ${argument}; use one of ${STORE_URL_ADAPTERS.flatMap((a) => a.schemes).join(' ')}, a SQLite file path, or a store module`,
      );
    }
    return { kind: 'url', url: argument, adapter };
  }
  if (MODULE_EXTENSIONS.has(extname(argument).toLowerCase())) return { kind: 'module', path: argument };
  const sqlite = STORE_URL_ADAPTERS.find((a) => a.package === '@agentstore/sqlite')!;
  return { kind: 'url', url: pathToFileURL(resolve(argument)).href, adapter: sqlite };
}

/** Imports `specifier` as the project in `cwd` would (its node_modules, then its parents'). */
export async function importFromProject(
  specifier: string,
  cwd: string,
): Promise<Record<string, unknown> | null> {
  let resolved: string;
  try {
    resolved = createRequire(join(cwd, 'package.json')).resolve(specifier);
  } catch (error) {
    // Only "not installed" means not installed; a broken package must say what is wrong with it.
    if ((error as { code?: unknown }).code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
  return (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
}

export interface OpenStoreOptions {
  /** The project whose node_modules hold the adapter. Default: the current directory. */
  cwd?: string;
  /**
   * Ask the adapter for a store that cannot write (SQLite opens the file read-only and refuses
   * one without agentstore's tables). Adapters without the option ignore it.
   */
  readOnly?: boolean;
}

/** Opens the store a URL names through its adapter package, installed in the user's project. */
export async function openStoreFromUrl(
  url: string,
  adapter: (typeof STORE_URL_ADAPTERS)[number],
  options: OpenStoreOptions = {},
): Promise<AgentStore> {
  const cwd = options.cwd ?? process.cwd();
  const loaded = await importFromProject(adapter.package, cwd);
  if (!loaded) {
    throw new StoreUrlError(
      `${url.split('?')[0]} needs ${adapter.package}: install it in this project (npm install ${adapter.package} ${adapter.driver}) and run agentstore from the project's directory`,
    );
  }
  if (typeof loaded.storeFromUrl !== 'function') {
    throw new StoreUrlError(
      `${adapter.package} in this project is too old to open URLs (no storeFromUrl); upgrade it`,
    );
  }
  const open = loaded.storeFromUrl as (
    url: string,
    options: { readOnly?: boolean },
  ) => AgentStore | Promise<AgentStore>;
  try {
    return await open(url, { readOnly: options.readOnly === true });
  } catch (error) {
    // The adapter's typed refusal (not a database, no agentstore tables, a bad URL) is the answer.
    if (isAgentStoreError(error)) throw new StoreUrlError(error.message);
    throw error;
  }
}

/** A module that default-exports an AgentStore, or a function returning one (sync or async). */
export async function openStoreModule(modulePath: string): Promise<AgentStore> {
  const absolute = resolve(modulePath);
  if (!existsSync(absolute)) throw new StoreUrlError(`${modulePath} does not exist`);
  const loaded = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  const exported = loaded.default;
  const store = typeof exported === 'function' ? await (exported as () => unknown)() : exported;
  if (!store || typeof (store as AgentStore).load !== 'function') {
    throw new StoreUrlError(`${modulePath} must default-export an AgentStore or a function returning one`);
  }
  return store as AgentStore;
}

/** The store an inspector argument names: a module, a store URL, or a SQLite file path. */
export async function openStoreArgument(
  argument: string,
  options: OpenStoreOptions = {},
): Promise<AgentStore> {
  const target = classifyStoreArgument(argument);
  return target.kind === 'module'
    ? openStoreModule(target.path)
    : openStoreFromUrl(target.url, target.adapter, options);
}
