import { describeAgentStoreConformance } from '@agentstore/conformance';
import { afterAll } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { dynamodbCapabilities } from './support/capabilities.ts';
import { freshTable, testClient } from './support/dynamodb.ts';

// One client and one fresh table for the whole kit; every store shares the client and must not
// destroy it. The raw reader, corrupter and floor use the same client with their own commands.
const client = testClient();
let table: ReturnType<typeof freshTable> | undefined;
const tableName = async () => {
  table ??= freshTable(client, 'conformance');
  return (await table).tableName;
};
const name = await tableName();

describeAgentStoreConformance({
  name: 'dynamodb (DynamoDB Local)',
  createStore: async () => dynamodbStore({ client, tableName: await tableName() }),
  capabilities: dynamodbCapabilities(client, name),
});

afterAll(async () => {
  await (await table)?.drop();
  client.destroy();
});
