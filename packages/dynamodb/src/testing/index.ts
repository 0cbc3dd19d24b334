import type { OpenTestTarget } from '@agentstore/core/testing';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamodbStore } from '../dynamodb-store.ts';
import { createTable } from '../table.ts';
import { dynamodbCapabilities } from './capabilities.ts';

export { dynamodbCapabilities, rawItems, rawMessageSk } from './capabilities.ts';

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
    createStore: () => dynamodbStore({ client, tableName }),
    capabilities: dynamodbCapabilities(client, tableName),
    // DynamoDB Local commits a 99-item transaction in ~200 ms: 5,000 messages (51 transactions,
    // several 1 MB Query pages on load) keep the long-session check to seconds in CI.
    longSessionMessages: 5_000,
    async describe() {
      return `DynamoDB at ${options.endpoint} (@aws-sdk/client-dynamodb), table ${tableName}`;
    },
    async close() {
      if (ownsTable) await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    },
  };
}
