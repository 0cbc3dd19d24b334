import { createTable, dynamodbStore, upgradeTable } from '@agentstore/dynamodb';
import { launchDynamoDb } from '@agentstore/servers';
import {
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { readJson, writeJson } from '../corpus-files.ts';
import { type CorpusBackend, freshName, MAX_CLOCK_SKEW_MS } from './backend.ts';

const TABLE_FILE = 'table.json';
const ITEMS_FILE = 'items.json';

/** The table as DescribeTable reported it: enough to create the same layout under another name. */
interface TableDump {
  tableName: string;
  definition: Omit<CreateTableCommandInput, 'TableName'>;
  /** The TTL attribute when TTL was enabled, else null. */
  ttlAttribute: string | null;
}

/**
 * An item as the low-level API returned it (`{ S }`, `{ N }`, `{ M }`, …), with binary values
 * (`B`, `BS`) as base64 strings so the file is JSON.
 */
type RawItem = Record<string, unknown>;

const toJson = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return { $base64: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(toJson);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  return value;
};
const fromJson = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(fromJson);
  if (value && typeof value === 'object') {
    const base64 = (value as { $base64?: unknown }).$base64;
    if (typeof base64 === 'string') return new Uint8Array(Buffer.from(base64, 'base64'));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromJson(v)]));
  }
  return value;
};

async function readTable(client: DynamoDBClient, tableName: string): Promise<TableDump> {
  const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!table) throw new Error(`DescribeTable ${tableName} returned no table`);
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  return {
    tableName,
    definition: {
      BillingMode: table.BillingModeSummary?.BillingMode ?? 'PAY_PER_REQUEST',
      AttributeDefinitions: table.AttributeDefinitions,
      KeySchema: table.KeySchema,
      ...(table.GlobalSecondaryIndexes?.length
        ? {
            GlobalSecondaryIndexes: table.GlobalSecondaryIndexes.map((index) => ({
              IndexName: index.IndexName,
              KeySchema: index.KeySchema,
              Projection: index.Projection,
            })),
          }
        : {}),
    },
    ttlAttribute:
      status === 'ENABLED' || status === 'ENABLING'
        ? (ttl.TimeToLiveDescription?.AttributeName ?? null)
        : null,
  };
}

async function readItems(client: DynamoDBClient, tableName: string): Promise<RawItem[]> {
  const items: RawItem[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) items.push(toJson(item) as RawItem);
    start = page.LastEvaluatedKey;
  } while (start);
  // Scan order is the service's; the file's is stable.
  const key = (item: RawItem) => JSON.stringify(item);
  return items.sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

export async function dynamodbBackend(): Promise<CorpusBackend> {
  const server = await launchDynamoDb();
  const client = new DynamoDBClient({
    endpoint: server.info.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  const drop = (tableName: string) => client.send(new DeleteTableCommand({ TableName: tableName }));
  return {
    async capture() {
      const tableName = `agentstore-golden-${freshName()}`;
      await createTable(client, tableName);
      const store = dynamodbStore({ client, tableName, maxClockSkewMs: MAX_CLOCK_SKEW_MS });
      return {
        store,
        async dump(into) {
          writeJson(into, TABLE_FILE, await readTable(client, tableName));
          writeJson(into, ITEMS_FILE, await readItems(client, tableName));
        },
        async close() {
          await store.close();
          await drop(tableName);
        },
      };
    },
    async restore(from) {
      const table = readJson<TableDump>(from, TABLE_FILE);
      const items = readJson<RawItem[]>(from, ITEMS_FILE);
      const tableName = `golden-${freshName()}`;
      await client.send(new CreateTableCommand({ ...table.definition, TableName: tableName }));
      await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: tableName });
      if (table.ttlAttribute) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: tableName,
            TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
          }),
        );
      }
      for (const item of items) {
        await client.send(
          new PutItemCommand({
            TableName: tableName,
            Item: fromJson(item) as Record<string, AttributeValue>,
          }),
        );
      }
      // The documented upgrade step for tables of older layouts: idempotent.
      await upgradeTable(client, tableName);
      const store = dynamodbStore({ client, tableName, maxClockSkewMs: MAX_CLOCK_SKEW_MS });
      return {
        store,
        async close() {
          await store.close();
          await drop(tableName);
        },
      };
    },
    async stop() {
      client.destroy();
      await server.stop();
    },
  };
}
