import { randomBytes } from 'node:crypto';
import { type DropProxy, type LaunchedPostgres, launchPostgres, startDropProxy } from '@agentstore/servers';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../src/index.ts';

/** A fresh schema name per test file (or per call), so runs on a shared server never collide. */
export const freshSchema = (label = 't') => `as_${label}_${randomBytes(6).toString('hex')}`;

export interface Harness {
  server: LaunchedPostgres;
  url: string;
  /** A pool the tests own; stores created with it never end it. */
  pool: pg.Pool;
  schema: string;
  /** A migrated store on this file's schema, sharing `pool`. */
  store(options?: PostgresStoreOptions): Promise<PostgresStore>;
}

/**
 * Registers beforeAll/afterAll that start Postgres through the conformance launcher (or use
 * AGENTSTORE_PG_URL), and drop this file's schema at the end.
 */
export function usePostgres(label: string): Harness {
  const harness = { schema: freshSchema(label) } as Harness;
  const schemas = new Set<string>([harness.schema]);
  beforeAll(async () => {
    harness.server = await launchPostgres();
    harness.url = harness.server.info.url;
    harness.pool = new pg.Pool({ connectionString: harness.url, max: 20 });
    harness.pool.on('error', () => {});
  });
  harness.store = async (options = {}) => {
    const store = postgresStore({ pool: harness.pool }, { schema: harness.schema, ...options });
    schemas.add(options.schema ?? harness.schema);
    await store.migrate();
    return store;
  };
  afterAll(async () => {
    if (harness.pool) {
      for (const schema of schemas) await harness.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await harness.pool.end();
    }
    await harness.server?.stop();
  });
  return harness;
}

let counter = 0;
export const uniqueId = (label = 's') => `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export const message = (id: string, content = `content of ${id}`, extra: Record<string, unknown> = {}) => ({
  id,
  role: 'user' as const,
  content,
  createdAt: new Date().toISOString(),
  ...extra,
});

export const init = (
  extra: Partial<{ agentName: string; ownerId: string | null; tenantId: string | null }> = {},
) => ({
  agentName: 'agent',
  ownerId: null,
  tenantId: null,
  state: { step: 0 },
  ...extra,
});

/** A store whose one connection goes through a drop proxy, for the describe block it is called in. */
export interface ProxiedStore {
  proxy: DropProxy;
  pool: pg.Pool;
  store: PostgresStore;
}

/**
 * Registers beforeAll/afterAll hooks that put a drop proxy in front of `server`, open a one-
 * connection pool through it and a migrated store on the harness's schema. Read the fields inside tests.
 */
export function useProxiedStore(server: Harness): ProxiedStore {
  const proxied = {} as ProxiedStore;
  beforeAll(async () => {
    const upstream = new URL(server.url);
    proxied.proxy = await startDropProxy(upstream.hostname, Number(upstream.port));
    const viaProxy = new URL(server.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxied.proxy.port);
    proxied.pool = new pg.Pool({ connectionString: viaProxy.toString(), max: 1 });
    proxied.pool.on('error', () => {});
    proxied.store = postgresStore({ pool: proxied.pool }, { schema: server.schema });
    await proxied.store.migrate();
  });
  afterAll(async () => {
    await proxied.pool?.end();
    await proxied.proxy?.close();
  });
  return proxied;
}
