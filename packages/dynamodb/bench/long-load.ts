/**
 * One long session's `load`: time and memory around it (heap and RSS deltas next to the size of
 * the result), on a throwaway DynamoDB Local. Not in CI. From packages/dynamodb:
 *   pnpm run long-load                    # 100,000 messages; LONG_MESSAGES=… to change
 */
import { machineInfo, measureLongLoad } from '@agentstore/bench';
import { launchDynamoDb } from '@agentstore/servers';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTable, dynamodbStore } from '../src/index.ts';

const server = await launchDynamoDb();
const client = new DynamoDBClient({
  endpoint: server.info.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
});
try {
  const tableName = `long-${Date.now().toString(36)}`;
  await createTable(client, tableName);
  const store = dynamodbStore({ client, tableName });
  await measureLongLoad('DynamoDB Local', store, machineInfo());
  await store.close();
} finally {
  client.destroy();
  await server.stop();
}
