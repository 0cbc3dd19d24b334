import {
  type AgentStore,
  InvalidArgumentError,
  MAX_LEASE_TTL_MS,
  SchemaMissingError,
} from '@agentstore/core';
import { defineStore, type StoreImplementation } from '@agentstore/core/store';
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
import { tableReadiness } from './verify-table.ts';

export interface DynamoDbStoreOptions {
  /** Your client. The store uses it and never destroys it; `close()` leaves it open. */
  client?: DynamoDBClient;
  /** Used only without `client`: the store creates a client from this and destroys it on `close()`. */
  clientConfig?: DynamoDBClientConfig;
  /** A table with the layout of `tableDefinition()` (see `createTable`). */
  tableName: string;
  /**
   * Stamp the session item with `ttl` = now + ttlSeconds at every append that holds no lease (or
   * releases it), and lease end + `maxClockSkewMs` + ttlSeconds at every acquire and renew, so
   * DynamoDB TTL removes sessions idle that long and never one under a live lease. Only the
   * session item carries it: expiry takes the session away whole (a partition without its
   * session item does not load), never its oldest messages first. The message items it leaves
   * are removed only by a later `deleteSession` of that id, or avoided by running
   * `deleteIdleSessions` with a cutoff inside the TTL (see the README). Off by default.
   */
  ttlSeconds?: number;
  /**
   * Before the first operation, check the table once (read-only: DescribeTable, and
   * DescribeTimeToLive when `ttlSeconds` is set) and fail with a typed error saying what to
   * change when it is missing, has another layout, or has TTL off while `ttlSeconds` is set.
   * Default true; turn off only for a role without `dynamodb:DescribeTable`.
   */
  verifyTable?: boolean;
  /**
   * DynamoDB has no server clock a condition can read. Taking over a lease needs none: a store
   * takes a lease held by another only after watching its record stay unchanged for its TTL on
   * its own monotonic clock (see the README). Client clocks still judge a lease in a lease-less
   * append and in `deleteIdleSessions`, where it counts as expired only this long after its stored
   * expiry. It must cover the largest difference between the clocks of any two processes using
   * the table (NTP-synced hosts: milliseconds; laptops and containers without NTP: more).
   * Integer ms, 0 to 24 h. Default 5,000.
   */
  maxClockSkewMs?: number;
}

/** The default `maxClockSkewMs`: generous for NTP-synced hosts, small next to the 30 s default TTL. */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 5_000;

/**
 * An AgentStore on one DynamoDB table: each append is one TransactWriteItems guarded by head seq
 * and lease, each load a GetItem, a Query and a GetItem (which proves the session was not
 * replaced meanwhile). See the package README for the table layout and limits.
 */
export function dynamodbStore(options: DynamoDbStoreOptions): AgentStore {
  validateTableName(options.tableName);
  const ttlSeconds = options.ttlSeconds ?? null;
  if (ttlSeconds !== null && (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0)) {
    throw new InvalidArgumentError({ argument: 'ttlSeconds', reason: 'must be a positive integer' });
  }
  const maxClockSkewMs = options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS;
  if (!Number.isSafeInteger(maxClockSkewMs) || maxClockSkewMs < 0 || maxClockSkewMs > MAX_LEASE_TTL_MS) {
    throw new InvalidArgumentError({
      argument: 'maxClockSkewMs',
      reason: `must be an integer number of ms from 0 to ${MAX_LEASE_TTL_MS}`,
    });
  }
  const owned = options.client === undefined;
  const client = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
  const context: StoreContext = { client, tableName: options.tableName, ttlSeconds, maxClockSkewMs };
  const limits = { ...DYNAMODB_LIMITS };
  let closed = false;

  // The table is checked once, before the first operation; a check that found a problem (or
  // failed: a passing network error) runs again on the next operation, so a table fixed or
  // upgraded meanwhile is seen. Missing indexes stop only listing and retention.
  const fine = { data: null, indexes: null };
  let readiness: Promise<{ data: Error | null; indexes: Error | null }> | null =
    options.verifyTable === false ? Promise.resolve(fine) : null;
  const check = async () => {
    readiness ??= tableReadiness(client, options.tableName, { ttl: ttlSeconds !== null });
    const current = readiness;
    return current.catch((error: unknown) => {
      if (readiness === current) readiness = null;
      throw error;
    });
  };
  const open = async (needs: 'data' | 'indexes' = 'data') => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
    let ready = await check();
    // Index problems seen earlier may be gone (upgradeTable ran since): look again once.
    if (needs === 'indexes' && ready.indexes && !ready.data) {
      readiness = null;
      ready = await check();
    }
    // Only a failing operation checks again: a table with old indexes costs no describe per write.
    const problem = ready.data ?? (needs === 'indexes' ? ready.indexes : null);
    if (problem) {
      readiness = null;
      throw problem;
    }
    return context;
  };

  // Every input reaches these methods checked and copied by core's boundary, before any I/O.
  const implementation = {
    durable: true,
    limits,
    maxClockSkewMs,
    load: async (sessionId, loadOptions) => loadSession(await open(), sessionId, loadOptions),
    append: async (sessionId, input) => appendMessages(await open(), sessionId, input),
    acquireLease: async (sessionId, input) => acquireLease(await open(), sessionId, input),
    renewLease: async (sessionId, input) => renewLease(await open(), sessionId, input),
    releaseLease: async (sessionId, input) => releaseLease(await open(), sessionId, input),
    listSessions: async (input) => listSessions(await open('indexes'), input),
    deleteSession: async (sessionId) => deleteSession(await open(), sessionId),
    deleteIdleSessions: async (request) => deleteIdleSessions(await open('indexes'), request),
    async close() {
      if (closed) return;
      closed = true;
      if (owned) client.destroy();
    },
  } satisfies StoreImplementation;
  // A table deleted after the check surfaces the same way as one that never existed.
  const mapError = (error: unknown) =>
    errorName(error) === 'ResourceNotFoundException'
      ? new SchemaMissingError(
          {
            store: '@agentstore/dynamodb',
            missing: `table ${options.tableName}`,
            fix: `create it with \`await createTable(client, '${options.tableName}')\` or from \`tableDefinition()\` in your infrastructure code.`,
          },
          { cause: error },
        )
      : error;
  return defineStore(implementation, { mapError });
}
