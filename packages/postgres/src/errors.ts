import { SchemaMissingError, StoreConfigurationError } from '@agentstore/core';

const STORE = '@agentstore/postgres';

/**
 * Raw pg errors a user cannot act on, turned into typed errors that say what to do:
 * - 42P01 / 3F000 (a table or the schema does not exist): `migrate()` was never run;
 * - 42883 naming the store's own refusal function: the schema predates migration 4 (a package
 *   upgraded without running `migrate()`);
 * - 42501 on the store's refusal function: the role may use the tables but not EXECUTE the
 *   function (a database whose default privileges revoke EXECUTE from PUBLIC);
 * - 42P05 / 26000 (prepared statement already exists / does not exist): a transaction-mode
 *   pooler (PgBouncer < 1.21, or without `max_prepared_statements`) hands each transaction
 *   another server connection, so named prepared statements collide. Light sequential traffic
 *   often passes; concurrency shows it, which is why the error names the option.
 */
export function translatePgError(
  error: unknown,
  context: { schema: string; preparedStatements: boolean },
): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === '42P01' || code === '3F000' || (code === '42883' && /refuse_append/.test(message))) {
    return new SchemaMissingError(
      {
        store: STORE,
        missing: message.replace(/ does not exist$/, ''),
        fix: `call \`await store.migrate()\` once (at deploy or start-up; idempotent and safe to race) before the first run, with a role that may create tables in schema "${context.schema}".`,
      },
      { cause: error },
    );
  }
  if (code === '42501' && /refuse_append/.test(message)) {
    return new StoreConfigurationError(
      {
        store: STORE,
        problem: 'refusal-function-not-executable',
        detail: `the server says "${message}": every append calls this function (migration 4) to report a refusal, so the role needs EXECUTE on it as well as its table privileges.`,
        fix: `GRANT EXECUTE ON FUNCTION "${context.schema}".<tablePrefix>refuse_append(text, text) TO <the store's role>; (or let the role that ran migrate() run the store).`,
      },
      { cause: error },
    );
  }
  if (
    (code === '42P05' || code === '26000') &&
    context.preparedStatements &&
    /prepared statement/.test(message)
  ) {
    return new StoreConfigurationError(
      {
        store: STORE,
        problem: 'prepared-statements-behind-pooler',
        detail: `the server says "${message}": named prepared statements are landing on server connections that did not prepare them, which is what a transaction-mode pooler (PgBouncer before 1.21, or with max_prepared_statements = 0) does.`,
        fix: 'pass `{ preparedStatements: false }` to postgresStore(), or set max_prepared_statements > 0 on PgBouncer >= 1.21, or use session pooling.',
      },
      { cause: error },
    );
  }
  return error;
}
