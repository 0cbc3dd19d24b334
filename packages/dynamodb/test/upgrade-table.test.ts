import { CreateTableCommand, DeleteTableCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, expect, it } from 'vitest';
import { dynamodbStore, upgradeTable } from '../src/index.ts';
import { init, message, testClient } from './support/dynamodb.ts';

const client = testClient();
const tableName = `agentstore-upgrade-${crypto.randomUUID().slice(0, 8)}`;
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => {});
  client.destroy();
});

it('upgradeTable gives a 0.1 table the session indexes and backfills its sessions', async () => {
  // The 0.1 layout: the single `sessions` index on `kind`.
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'kind', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'sessions',
          KeySchema: [
            { AttributeName: 'kind', KeyType: 'HASH' },
            { AttributeName: 'pk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['agentName', 'ownerId', 'tenantId'] },
        },
      ],
    }),
  );
  const store = dynamodbStore({ client, tableName });
  for (const id of ['a', 'b', 'c']) {
    await store.append(id, {
      expectedSeq: 0,
      messages: [message()],
      session: { init: init({ ownerId: 'o1', tenantId: 't1' }) },
      lease: null,
    });
    // What a 0.1 store wrote: no index attributes.
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'REMOVE #a, #o, #t, #g, #ot, #og, #tg, #otg, #i, #at',
        ExpressionAttributeNames: {
          '#a': 'gA',
          '#o': 'gO',
          '#t': 'gT',
          '#g': 'gG',
          '#ot': 'gOT',
          '#og': 'gOG',
          '#tg': 'gTG',
          '#otg': 'gOTG',
          '#i': 'gI',
          '#at': 'idleAt',
        },
      }),
    );
  }
  const first = await upgradeTable(client, tableName);
  expect(first.createdIndexes).toHaveLength(9);
  expect(first.backfilled).toBe(3);
  for (const filter of [
    {},
    { ownerId: 'o1' },
    { tenantId: 't1' },
    { agentName: 'agent' },
    { ownerId: 'o1', tenantId: 't1' },
    { ownerId: 'o1', agentName: 'agent' },
    { tenantId: 't1', agentName: 'agent' },
    { ownerId: 'o1', tenantId: 't1', agentName: 'agent' },
  ]) {
    expect((await store.listSessions({ ...filter, limit: 10 })).sessions.map((s) => s.id)).toEqual([
      'a',
      'b',
      'c',
    ]);
  }
  const swept = await store.deleteIdleSessions({
    idleBefore: new Date(Date.now() + 60_000).toISOString(),
    limit: 10,
  });
  let deleted = swept.deleted;
  let cursor = swept.nextCursor;
  while (cursor !== null) {
    const page = await store.deleteIdleSessions({
      idleBefore: new Date(Date.now() + 60_000).toISOString(),
      limit: 10,
      cursor,
    });
    deleted = deleted.concat(page.deleted);
    cursor = page.nextCursor;
  }
  expect(deleted.sort()).toEqual(['a', 'b', 'c']);
  expect(await upgradeTable(client, tableName)).toEqual({ createdIndexes: [], backfilled: 0 });
}, 180_000);
