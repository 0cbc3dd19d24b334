import type { OpenTestTarget } from '@agentstore/core/testing';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamodbStore } from '../dynamodb-store.ts';
import { createTable } from '../table.ts';
import { dynamodbCapabilities } from './capabilities.ts';

export { dynamodbCapabilities, rawItems, rawMessageSk } from './capabilities.ts';

/**
 * The clock skew the test target declares: every client runs on this one machine (one clock), and
 * a small value keeps lease takeovers in the kit fast while the kit's skewed-clock checks still
 * exercise it (they skew a client by less than this and expect the live lease to hold).
 */
export const TEST_MAX_CLOCK_SKEW_MS = 1_000;

/**
 * The DynamoDB store under test on a fresh table at `endpoint` (DynamoDB Local here; the table is
 * dropped on close by the target that made it), with capabilities written against the raw
 * client and the documented layout.
 */
export async function dynamodbTestTarget(options: {
  endpoint: string;
  /** Reuse this table (e.g. another process's); default a fresh one. */
  tableName?: string;
  name?: string;
}): Promise<OpenTestTarget> {
  const client = new DynamoDBClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  const tableName = options.tableName ?? `agentstore-test-${crypto.randomUUID().slice(0, 8)}`;
  const ownsTable = options.tableName === undefined;
  if (ownsTable) await createTable(client, tableName);
  return {
    name: options.name ?? 'dynamodb (DynamoDB Local)',
    reopen: { endpoint: options.endpoint, tableName },
    createStore: () => dynamodbStore({ client, tableName, maxClockSkewMs: TEST_MAX_CLOCK_SKEW_MS }),
    capabilities: dynamodbCapabilities(client, tableName),
    async describe() {
      return `DynamoDB at ${options.endpoint} (@aws-sdk/client-dynamodb), table ${tableName}`;
    },
    async close() {
      if (ownsTable) await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    },
  };
}
