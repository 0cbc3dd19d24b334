import type { AgentStore } from '@agentstore/core';
import type { StoreCapabilities } from '@agentstore/core/testing';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { importAdapterEntry } from './adapter-import.ts';
import type { CountedBackend } from './types.ts';

interface DynamoDbAdapter {
  dynamodbStore(options: { client: DynamoDBClient; tableName: string }): AgentStore;
}
interface DynamoDbTesting {
  dynamodbCapabilities(client: DynamoDBClient, tableName: string): StoreCapabilities;
}

/**
 * A DynamoDB client of our own on the target's table (same endpoint and local credentials as
 * the target), with a middleware inside the SDK's retry loop: every HTTP request sent counts,
 * retries included.
 */
export async function countedDynamoDb(reopen: Record<string, string | boolean>): Promise<CountedBackend> {
  const { endpoint, tableName } = reopen;
  if (typeof endpoint !== 'string' || typeof tableName !== 'string') {
    throw new Error('the dynamodb target does not say how to reopen it (endpoint, tableName)');
  }
  const { module: adapter, requireFromAdapter } =
    await importAdapterEntry<DynamoDbAdapter>('@agentstore/dynamodb');
  const { module: testing } = await importAdapterEntry<DynamoDbTesting>('@agentstore/dynamodb/testing');
  const sdk = requireFromAdapter('@aws-sdk/client-dynamodb') as typeof import('@aws-sdk/client-dynamodb');
  const client = new sdk.DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  let requests = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      requests += 1;
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'agentstoreBenchRequestCounter' },
  );
  const store = adapter.dynamodbStore({ client, tableName });
  return {
    method: 'driver',
    unit: 'DynamoDB HTTP requests (retries included)',
    store,
    floor: testing.dynamodbCapabilities(client, tableName).floor ?? null,
    count: () => requests,
    async close() {
      await store.close();
      client.destroy();
    },
  };
}
