import { randomUUID } from 'node:crypto';
import { isAgentStoreError } from '@agentstore/core';
import { CreateTableCommand, DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createTable, dynamodbStore, tableDefinition, tableProblems, verifyTable } from '../src/index.ts';
import { init, sessionId, testClient } from './support/dynamodb.ts';

const client = testClient();
const made: string[] = [];
const name = (label: string) => {
  const tableName = `agentstore-verify-${label}-${randomUUID().slice(0, 8)}`;
  made.push(tableName);
  return tableName;
};
afterAll(async () => {
  for (const TableName of made) await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  client.destroy();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as Error & { code?: string; problem?: string; fix?: string },
  );

/** A client that records the name of every command sent through it. */
function recordingClient(): { client: DynamoDBClient; sent: string[] } {
  const sent: string[] = [];
  const recording = {
    send: (command: { constructor: { name: string } }) => {
      sent.push(command.constructor.name);
      return client.send(command as never);
    },
  } as unknown as DynamoDBClient;
  return { client: recording, sent };
}

describe('the layout comparison', () => {
  const definition = tableDefinition('agentstore-layout');
  const described = { ...definition, GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes! };

  it('a table exactly as tableDefinition() describes it has no problems, whatever each index projects', () => {
    expect(tableProblems(described, 'agentstore-layout')).toEqual([]);
    const allProjected = described.GlobalSecondaryIndexes.map((index) => ({
      ...index,
      Projection: { ProjectionType: 'ALL' as const },
    }));
    expect(
      tableProblems({ ...described, GlobalSecondaryIndexes: allProjected }, 'agentstore-layout'),
    ).toEqual([]);
  });

  it('an INCLUDE index without an attribute the store reads is a problem; KEYS_ONLY where INCLUDE is needed too', () => {
    const needy = described.GlobalSecondaryIndexes.find(
      (i) => (i.Projection?.NonKeyAttributes ?? []).length > 0,
    )!;
    const keysOnly = described.GlobalSecondaryIndexes.map((index) =>
      index === needy ? { ...index, Projection: { ProjectionType: 'KEYS_ONLY' as const } } : index,
    );
    expect(tableProblems({ ...described, GlobalSecondaryIndexes: keysOnly }, 'agentstore-layout')).toEqual([
      `index ${needy.IndexName} does not project ${needy.Projection!.NonKeyAttributes!.join(', ')}`,
    ]);
  });
});

describe('the table check the store runs once', () => {
  it('a missing table is SchemaMissingError naming createTable; once created, the same store works', async () => {
    const tableName = name('missing');
    const store = dynamodbStore({ client, tableName });
    const error = await failure(store.load(sessionId()));
    expect(isAgentStoreError(error, 'SCHEMA_MISSING')).toBe(true);
    expect(error?.message).toContain(`createTable(client, '${tableName}')`);
    await createTable(client, tableName);
    expect(await store.load(sessionId())).toBeNull();
    await store.close();
  });

  it('a table with other key names is a typed layout error, before any write', async () => {
    const tableName = name('keys');
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'id', AttributeType: 'S' },
          { AttributeName: 'seq', AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: 'id', KeyType: 'HASH' },
          { AttributeName: 'seq', KeyType: 'RANGE' },
        ],
      }),
    );
    const store = dynamodbStore({ client, tableName });
    const error = await failure(store.acquireLease(sessionId(), { holder: 'h', ttlMs: 1000, init: init() }));
    expect(isAgentStoreError(error, 'STORE_CONFIGURATION')).toBe(true);
    expect(error?.problem).toBe('table-layout');
    expect(error?.message).toContain('key schema is id:HASH,seq:RANGE, expected pk:HASH,sk:RANGE');
    const firstIndex = tableDefinition(tableName).GlobalSecondaryIndexes![0]!.IndexName;
    expect(error?.message).toContain(`global secondary index ${firstIndex} is missing`);
    await store.close();
  });

  it('TTL off while ttlSeconds is set is reported; createTable turns it on without re-creating the table', async () => {
    const tableName = name('ttl');
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
    const withTtl = dynamodbStore({ client, tableName, ttlSeconds: 3600 });
    const error = await failure(withTtl.load(sessionId()));
    expect(isAgentStoreError(error, 'STORE_CONFIGURATION')).toBe(true);
    expect(error?.problem).toBe('ttl-disabled');
    // Without ttlSeconds the same table is fine.
    await verifyTable(client, tableName);

    const recording = recordingClient();
    await createTable(recording.client, tableName);
    expect(recording.sent).not.toContain('CreateTableCommand');
    expect(recording.sent[0]).toBe('DescribeTableCommand');
    expect(recording.sent).toContain('UpdateTimeToLiveCommand');
    expect(await withTtl.load(sessionId())).toBeNull();
    await withTtl.close();
  });

  it('createTable on a table that is already right only describes it (a verify-only role can run it)', async () => {
    const tableName = name('ok');
    await createTable(client, tableName);
    const recording = recordingClient();
    await createTable(recording.client, tableName);
    expect(new Set(recording.sent)).toEqual(new Set(['DescribeTableCommand', 'DescribeTimeToLiveCommand']));
  });

  it('the check runs once per store, not per operation', async () => {
    const tableName = name('once');
    await createTable(client, tableName);
    const recording = recordingClient();
    const store = dynamodbStore({ client: recording.client, tableName });
    for (let i = 0; i < 3; i++) await store.load(sessionId());
    expect(recording.sent.filter((n) => n === 'DescribeTableCommand')).toHaveLength(1);
    await store.close();
  });
});

it('a table of an older layout (an index missing) keeps reads and writes working; listing says to upgrade', async () => {
  const tableName = name('oldindex');
  const definition = tableDefinition(tableName);
  // The first index missing, and with it the attributes only that index uses as keys.
  const [, ...rest] = definition.GlobalSecondaryIndexes!;
  const stillKeys = new Set(
    [definition.KeySchema!, ...rest.map((i) => i.KeySchema!)].flat().map((k) => k.AttributeName),
  );
  await client.send(
    new CreateTableCommand({
      ...definition,
      AttributeDefinitions: definition.AttributeDefinitions!.filter((a) => stillKeys.has(a.AttributeName)),
      GlobalSecondaryIndexes: rest,
    }),
  );
  const store = dynamodbStore({ client, tableName });
  const id = sessionId();
  const { epoch } = await store.acquireLease(id, { holder: 'h', ttlMs: 10_000, init: init() });
  expect((await store.acquireLease(id, { holder: 'h', ttlMs: 10_000, init: init() })).epoch).toBe(epoch + 1);
  const error = await failure(store.listSessions({ limit: 10, cursor: null }));
  expect(isAgentStoreError(error, 'STORE_CONFIGURATION')).toBe(true);
  expect(error?.message).toContain(
    `global secondary index ${definition.GlobalSecondaryIndexes![0]!.IndexName} is missing`,
  );
  expect(error?.fix).toContain('upgradeTable');
  await store.close();
});
