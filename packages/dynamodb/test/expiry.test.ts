import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { dynamodbCapabilities, rawItems } from '../src/testing/capabilities.ts';
import {
  deleteSessionItem,
  freshTable,
  init,
  message,
  recordRequests,
  sessionId,
  testClient,
} from './support/dynamodb.ts';

/*
 * With ttlSeconds only the session item expires. What expiry leaves (message items) makes the
 * session unloadable, never half-loaded, and does not block a new session under the same id: the
 * new session's first append is its usual single request (no purge on the hot path), it overwrites
 * the leftovers at its seqs, and neither load nor the raw reader ever shows one of the old items.
 */
const client = testClient();
const requests = recordRequests(client);
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'expiry');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const expire = (id: string) => deleteSessionItem(client, table.tableName, id);
const sortKeys = async (id: string) =>
  (await rawItems(client, table.tableName, id)).map((item) => item.sk?.S);

it('an expired session is gone whole; its id starts a new session in one request, which never reads the old items', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName, ttlSeconds: 3600 });
  const raw = dynamodbCapabilities(client, table.tableName).raw;
  const id = sessionId('expired');
  // Message 1 was large (a head item plus a chunk), and there were three.
  await store.append(id, {
    expectedSeq: 0,
    messages: [message('y'.repeat(500_000)), message('b'), message('c')],
    session: { init: init() },
    lease: null,
  });
  await expire(id); // what DynamoDB TTL does: the session item only carries `ttl`
  expect(await store.load(id)).toBeNull();
  expect(await raw.session(id)).toBeNull();

  const fresh = message('new');
  requests.length = 0;
  expect(
    await store.append(id, { expectedSeq: 0, messages: [fresh], session: { init: init() }, lease: null }),
  ).toEqual({ headSeq: 1 });
  expect(requests).toEqual(['TransactWriteItemsCommand']);
  // The old chunk of message 1 and old messages 2 and 3 are still there, and ignored.
  expect(await sortKeys(id)).toEqual([
    'm#0000000000000001',
    'm#0000000000000001#001',
    'm#0000000000000002',
    'm#0000000000000003',
    'session',
  ]);
  expect((await store.load(id))?.messages.map((m) => m.id)).toEqual([fresh.id]);
  expect((await raw.messages(id)).map((m) => m.id)).toEqual([fresh.id]);
  expect((await store.load(id, { afterSeq: 1 }))?.messages).toEqual([]);

  // The new session grows over the rest of the old seqs: each is overwritten, none leaks.
  const more = [message('two'), message('three'), message('four')];
  await store.append(id, { expectedSeq: 1, messages: more, lease: null });
  expect((await store.load(id))?.messages.map((m) => m.id)).toEqual([fresh.id, ...more.map((m) => m.id)]);
  expect((await raw.messages(id)).map((m) => m.content)).toEqual(['new', 'two', 'three', 'four']);

  // deleteSession removes every item of the partition, old ones included.
  expect(await store.deleteSession(id)).toEqual({ deleted: true });
  expect(await sortKeys(id)).toEqual([]);
});

it('a new session created by acquireLease over leftovers takes its first append in one request too', async () => {
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
  requests.length = 0;
  await store.append(id, { expectedSeq: 0, messages: [message('only')], lease: { holder: 'w', epoch } });
  expect(requests).toEqual(['TransactWriteItemsCommand']);
  expect((await store.load(id))?.messages.map((m) => m.content)).toEqual(['only']);
});

it('deleteSession removes a long session in bounded batches, and stops without touching a session re-created meanwhile', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName });
  const id = sessionId('recreated');
  let head = 0;
  for (let i = 0; i < 3; i++) {
    ({ headSeq: head } = await store.append(id, {
      expectedSeq: head,
      messages: Array.from({ length: 90 }, () => message()),
      session: i === 0 ? { init: init() } : undefined,
      lease: null,
    }));
  }
  expect(head).toBe(270);
  // A second store re-creates the session right after the first batch of deletes has landed.
  const other = dynamodbStore({ client: testClient(), tableName: table.tableName });
  const fresh = message('fresh');
  let batches = 0;
  const send = client.send.bind(client);
  client.send = (async (command: { constructor: { name: string } }) => {
    const output = await send(command as never);
    if (command.constructor.name === 'TransactWriteItemsCommand' && ++batches === 1) {
      await other.append(id, { expectedSeq: 0, messages: [fresh], session: { init: init() }, lease: null });
    }
    return output;
  }) as typeof client.send;
  requests.length = 0;
  try {
    expect(await store.deleteSession(id)).toEqual({ deleted: true });
  } finally {
    client.send = send;
  }
  // One batch of 99 went; the second was refused by its check (the session exists again).
  expect(requests.filter((r) => r === 'TransactWriteItemsCommand')).toHaveLength(2);
  expect((await store.load(id))?.messages.map((m) => m.id)).toEqual([fresh.id]);
  expect(await store.deleteSession(id)).toEqual({ deleted: true });
  expect(await sortKeys(id)).toEqual([]);
});

it('a stray item that claims to be a chunk of the current message is not joined to it', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName });
  const id = sessionId('stray');
  const only = message('small');
  await store.append(id, { expectedSeq: 0, messages: [only], session: { init: init() }, lease: null });
  await client.send(
    new PutItemCommand({
      TableName: table.tableName,
      Item: { pk: { S: id }, sk: { S: 'm#0000000000000001#001' }, body: { S: 'left over' } },
    }),
  );
  expect((await store.load(id))?.messages).toEqual([{ ...only, seq: 1 }]);
});
