import { type AgentStore, InvalidArgumentError, MAX_LEASE_TTL_MS } from '@agentstore/core';
import { snapshotInput, validateRetentionInput } from '@agentstore/core/store';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { appendMessages } from './append.ts';
import type { StoreContext } from './context.ts';
import { deleteSession } from './delete-session.ts';
import { acquireLease, releaseLease, renewLease } from './leases.ts';
import { DYNAMODB_LIMITS } from './limits.ts';
import { listSessions } from './list-sessions.ts';
import { loadSession } from './load.ts';
import { deleteIdleSessions } from './retention.ts';
import { validateTableName } from './table.ts';

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
   * DynamoDB has no server clock a condition can read, so lease expiry is judged by the clock of
   * the client that tries to take the lease: a lease counts as expired only this long after its
   * stored expiry. It must cover the largest difference between the clocks of any two processes
   * using the table (NTP-synced hosts: milliseconds; laptops and containers without NTP: more).
   * A larger value delays taking over a crashed run's lease by that much. Integer ms, 0 to 24 h.
   * Default 5,000.
   */
  maxClockSkewMs?: number;
}

/** The default `maxClockSkewMs`: generous for NTP-synced hosts, small next to the 30 s default TTL. */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 5_000;

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

  const open = () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
    return context;
  };

  return {
    durable: true,
    limits,
    maxClockSkewMs,
    load: async (sessionId, loadOptions) => loadSession(open(), sessionId, loadOptions),
    // Validated and stored from one read of the caller's objects (getters, Proxies, toJSON).
    append: async (sessionId, input) => appendMessages(open(), limits, sessionId, snapshotInput(input)),
    acquireLease: async (sessionId, input) => acquireLease(open(), sessionId, snapshotInput(input)),
    renewLease: async (sessionId, input) => renewLease(open(), sessionId, input),
    releaseLease: async (sessionId, input) => releaseLease(open(), sessionId, input),
    listSessions: async (input) => listSessions(open(), input),
    deleteSession: async (sessionId) => deleteSession(open(), sessionId),
    deleteIdleSessions: async (input) => deleteIdleSessions(open(), validateRetentionInput(input)),
    async close() {
      if (closed) return;
      closed = true;
      if (owned) client.destroy();
    },
  };
}
