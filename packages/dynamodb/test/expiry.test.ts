import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { rawItems } from '../src/testing/capabilities.ts';
import { freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';

/*
 * With ttlSeconds only the session item expires. What expiry leaves (message items) makes the
 * session unloadable, never half-loaded, and does not block a new session under the same id.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'expiry');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const expire = (id: string) =>
  client.send(
    new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: id }, sk: { S: 'session' } } }),
  );

it('an expired session is gone whole, and its id starts a new session from seq 1', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName, ttlSeconds: 3600 });
  const id = sessionId('expired');
  await store.append(id, {
    expectedSeq: 0,
    messages: [message('a'), message('b'), message('y'.repeat(500_000))],
    session: { init: init() },
    lease: null,
  });
  await expire(id); // what DynamoDB TTL does: the session item only carries `ttl`
  expect(await store.load(id)).toBeNull();
  const fresh = message('new');
  expect(
    await store.append(id, { expectedSeq: 0, messages: [fresh], session: { init: init() }, lease: null }),
  ).toEqual({
    headSeq: 1,
  });
  const loaded = await store.load(id);
  expect(loaded?.messages.map((m) => m.id)).toEqual([fresh.id]);
  expect((await rawItems(client, table.tableName, id)).map((item) => item.sk?.S)).toEqual([
    'm#0000000000000001',
    'session',
  ]);
});

it('a new session created by acquireLease over leftovers takes its first append too', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName });
  const id = sessionId('leftovers');
  await store.append(id, {
    expectedSeq: 0,
    messages: [message(), message()],
    session: { init: init() },
    lease: null,
  });
  await expire(id);
  const { epoch } = await store.acquireLease(id, { holder: 'w', ttlMs: 60_000, init: init() });
  await store.append(id, { expectedSeq: 0, messages: [message('only')], lease: { holder: 'w', epoch } });
  expect((await store.load(id))?.messages.map((m) => m.content)).toEqual(['only']);
});
