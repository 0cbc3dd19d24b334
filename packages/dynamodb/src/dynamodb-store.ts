import {
  type AgentStore,
  InvalidArgumentError,
  mapStoreErrors,
  SchemaMissingError,
  validateRetentionInput,
} from '@agentstore/core';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { appendMessages } from './append.ts';
import { errorName, type StoreContext } from './context.ts';
import { deleteSession } from './delete-session.ts';
import { acquireLease, releaseLease, renewLease } from './leases.ts';
import { DYNAMODB_LIMITS } from './limits.ts';
import { listSessions } from './list-sessions.ts';
import { loadSession } from './load.ts';
import { deleteIdleSessions } from './retention.ts';
import { validateTableName } from './table.ts';
import { verifyTable } from './verify-table.ts';

export interface DynamoDbStoreOptions {
  /** Your client. The store uses it and never destroys it; `close()` leaves it open. */
  client?: DynamoDBClient;
  /** Used only without `client`: the store creates a client from this and destroys it on `close()`. */
  clientConfig?: DynamoDBClientConfig;
  /** A table with the layout of `tableDefinition()` (see `createTable`). */
  tableName: string;
  /**
   * Stamp the session item with `ttl` = now + ttlSeconds at every append and lease call, so
   * DynamoDB TTL removes sessions idle that long. Only the session item carries it: expiry takes
   * the session away whole (a partition without its session item does not load), never its
   * oldest messages first. The message items it leaves are removed by `deleteSession`, or avoided
   * by running `deleteIdleSessions` with a cutoff inside the TTL (see the README). Off by default.
   */
  ttlSeconds?: number;
  /**
   * Before the first operation, check the table once (read-only: DescribeTable, and
   * DescribeTimeToLive when `ttlSeconds` is set) and fail with a typed error saying what to
   * change when it is missing, has another layout, or has TTL off while `ttlSeconds` is set.
   * Default true; turn off only for a role without `dynamodb:DescribeTable`.
   */
  verifyTable?: boolean;
}

/**
 * An AgentStore on one DynamoDB table: each append is one TransactWriteItems guarded by head seq
 * and lease, each load one Query. See the package README for the table layout and limits.
 */
export function dynamodbStore(options: DynamoDbStoreOptions): AgentStore {
  validateTableName(options.tableName);
  const ttlSeconds = options.ttlSeconds ?? null;
  if (ttlSeconds !== null && (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0)) {
    throw new InvalidArgumentError({ argument: 'ttlSeconds', reason: 'must be a positive integer' });
  }
  const owned = options.client === undefined;
  const client = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
  const context: StoreContext = { client, tableName: options.tableName, ttlSeconds };
  const limits = { ...DYNAMODB_LIMITS };
  let closed = false;

  // The table is verified once, before the first operation; a failed check (a missing table, a
  // wrong layout, a passing network error) is tried again by the next operation.
  let verified: Promise<void> | null = options.verifyTable === false ? Promise.resolve() : null;
  const open = async () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
    verified ??= verifyTable(client, options.tableName, { ttl: ttlSeconds !== null }).catch(
      (error: unknown) => {
        verified = null;
        throw error;
      },
    );
    await verified;
    return context;
  };

  const store: AgentStore = {
    durable: true,
    limits,
    load: async (sessionId, loadOptions) => loadSession(await open(), sessionId, loadOptions),
    append: async (sessionId, input) => appendMessages(await open(), limits, sessionId, input),
    acquireLease: async (sessionId, input) => acquireLease(await open(), sessionId, input),
    renewLease: async (sessionId, input) => renewLease(await open(), sessionId, input),
    releaseLease: async (sessionId, input) => releaseLease(await open(), sessionId, input),
    listSessions: async (input) => listSessions(await open(), input),
    deleteSession: async (sessionId) => deleteSession(await open(), sessionId),
    deleteIdleSessions: async (input) => deleteIdleSessions(await open(), validateRetentionInput(input)),
    async close() {
      if (closed) return;
      closed = true;
      if (owned) client.destroy();
    },
  };
  // A table deleted after the check surfaces the same way as one that never existed.
  return mapStoreErrors(store, (error) =>
    errorName(error) === 'ResourceNotFoundException'
      ? new SchemaMissingError(
          {
            store: '@agentstore/dynamodb',
            missing: `table ${options.tableName}`,
            fix: `create it with \`await createTable(client, '${options.tableName}')\` or from \`tableDefinition()\` in your infrastructure code.`,
          },
          { cause: error },
        )
      : error,
  );
}
