import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, roundTripCounters, targetOnServer } from '@agentstore/core/testing';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamodbStore } from '../dynamodb-store.ts';
import { createTable } from '../table.ts';
import { dynamodbCapabilities } from './capabilities.ts';
import { importServers } from './import-servers.ts';

export { dynamodbCapabilities, rawItems, rawMessageSk } from './capabilities.ts';

/**
 * The clock skew the test target declares: every client runs on this one machine (one clock), and
 * a small value keeps lease takeovers in the kit fast while the kit's skewed-clock checks still
 * exercise it (they skew a client by less than this and expect the live lease to hold).
 */
export const TEST_MAX_CLOCK_SKEW_MS = 1_000;

/** A client on the endpoint with a middleware inside the SDK's retry loop: every HTTP request sent calls `tick`. */
function countedClient(endpoint: string, tick: () => void): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      tick();
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'agentstoreRequestCounter' },
  );
  return client;
}

export interface DynamodbTargetOptions {
  endpoint: string;
  /** Reuse this table (e.g. another process's); default a fresh one. */
  tableName?: string;
  name?: string;
  /** Where the DynamoDB Local this target runs on keeps its tables (null: in memory or not known here). */
  dataDir?: string | null;
}

/**
 * The DynamoDB store under test on a fresh table at `endpoint` (DynamoDB Local here; the table is
 * dropped on close by the target that made it), with capabilities written against the raw
 * client and the documented layout. Every store it creates has a client of its own whose HTTP
 * requests are counted (`roundTrips`).
 */
export async function dynamodbTestTarget(options: DynamodbTargetOptions): Promise<OpenTestTarget> {
  const counters = roundTripCounters();
  let tickFloor = () => {};
  const client = countedClient(options.endpoint, () => tickFloor());
  const tableName = options.tableName ?? `agentstore-test-${crypto.randomUUID().slice(0, 8)}`;
  const ownsTable = options.tableName === undefined;
  if (ownsTable) await createTable(client, tableName);
  const capabilities = dynamodbCapabilities(client, tableName);
  tickFloor = counters.track(capabilities.floor);
  return {
    name: options.name ?? 'dynamodb (DynamoDB Local)',
    module: import.meta.url,
    reopen: { endpoint: options.endpoint, tableName },
    createStore: () => {
      let tick = () => {};
      const own = countedClient(options.endpoint, () => tick());
      const store = dynamodbStore({ client: own, tableName, maxClockSkewMs: TEST_MAX_CLOCK_SKEW_MS });
      const counted: AgentStore = {
        ...store,
        async close() {
          await store.close();
          own.destroy();
        },
      };
      tick = counters.track(counted);
      return counted;
    },
    capabilities,
    roundTrips: counters.count,
    roundTripUnit: 'DynamoDB HTTP requests (retries included)',
    notes: ['DynamoDB Local (Java) answers for the service here: its latency is the JVM’s, not AWS’s.'],
    // DynamoDB Local commits a 99-item transaction in ~200 ms: 5,000 messages (51 transactions,
    // several 1 MB Query pages on load) keep the long-session check to seconds in CI.
    longSessionMessages: 5_000,
    async durabilitySettings() {
      const { dataDir } = options;
      return {
        settings: {
          storage: dataDir
            ? 'DynamoDB Local, file-backed (-dbPath)'
            : 'not known here (in memory, or a server this process did not start)',
        },
        ...(dataDir ? { dataDir } : {}),
      };
    },
    async describe() {
      return `DynamoDB at ${options.endpoint} (@aws-sdk/client-dynamodb), table ${tableName}`;
    },
    async close() {
      if (ownsTable) await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    },
  };
}

/**
 * What the kit and the tools open: with a target's `reopen`, the same table from another process;
 * without, a throwaway file-backed DynamoDB Local from `@agentstore/servers` (or the
 * endpoint `AGENTSTORE_DYNAMODB_ENDPOINT` names) and a fresh table, both gone on close.
 */
export default async function openDynamodbTarget(
  options?: Partial<DynamodbTargetOptions>,
): Promise<OpenTestTarget> {
  if (options?.endpoint) return dynamodbTestTarget(options as DynamodbTargetOptions);
  // A server of the user's own needs no launcher: @agentstore/servers is an optional peer.
  const endpoint = process.env.AGENTSTORE_DYNAMODB_ENDPOINT;
  if (endpoint) return dynamodbTestTarget({ ...options, endpoint, dataDir: null });
  const { launchDynamoDb } = await importServers(
    '@agentstore/dynamodb',
    'AGENTSTORE_DYNAMODB_ENDPOINT',
    'a DynamoDB Local',
  );
  return targetOnServer(
    () => launchDynamoDb({ persist: true }),
    (server) =>
      dynamodbTestTarget({ ...options, endpoint: server.info.endpoint, dataDir: server.info.dataDir }),
  );
}
