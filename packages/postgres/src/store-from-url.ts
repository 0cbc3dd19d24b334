import { type PostgresStore, postgresStore } from './postgres-store.ts';

/** Query parameters that configure the store; everything else is pg's. */
const STORE_PARAMS = ['schema', 'tablePrefix', 'preparedStatements'] as const;

/**
 * The store a URL names, for tools such as `agentstore inspect`: a pg connection string, plus
 * `schema`, `tablePrefix` and `preparedStatements=false` as query parameters when not the
 * defaults. The store owns its pool and ends it on `close()`.
 */
export function storeFromUrl(url: string): PostgresStore {
  const parsed = new URL(url);
  const option = (name: (typeof STORE_PARAMS)[number]) => parsed.searchParams.get(name) ?? undefined;
  const schema = option('schema');
  const tablePrefix = option('tablePrefix');
  const prepared = option('preparedStatements');
  for (const name of STORE_PARAMS) parsed.searchParams.delete(name);
  return postgresStore(
    { connectionString: parsed.href },
    {
      ...(schema !== undefined ? { schema } : {}),
      ...(tablePrefix !== undefined ? { tablePrefix } : {}),
      ...(prepared !== undefined ? { preparedStatements: prepared !== 'false' } : {}),
    },
  );
}
