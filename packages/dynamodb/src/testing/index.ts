import type { OpenTestTarget } from '@agentstore/core/testing';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamodbStore } from '../dynamodb-store.ts';
import { createTable } from '../table.ts';
import { dynamodbCapabilities } from './capabilities.ts';

export { dynamodbCapabilities, rawItems, rawMessageSk } from './capabilities.ts';

/**
 * The DynamoDB store under test on a fresh table (dropped on close) at `endpoint` — DynamoDB
 * Local here — with capabilities written against the raw client and the documented layout.
 */
export async function dynamodbTestTarget(options: {
  endpoint: string;
  name?: string;
}): Promise<OpenTestTarget> {
  const client = new DynamoDBClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  const tableName = `agentstore-test-${crypto.randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
  return {
    name: options.name ?? 'dynamodb (DynamoDB Local)',
    createStore: () => dynamodbStore({ client, tableName }),
    capabilities: dynamodbCapabilities(client, tableName),
    async describe() {
      return `DynamoDB at ${options.endpoint} (@aws-sdk/client-dynamodb), table ${tableName}`;
    },
    async close() {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    },
  };
}
