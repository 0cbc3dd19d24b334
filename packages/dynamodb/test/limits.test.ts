import { type AgentStore, CorruptRecordError, PayloadTooLargeError } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DYNAMODB_LIMITS, dynamodbStore } from '../src/index.ts';
import { rawItems, rawMessageSk } from '../src/testing/capabilities.ts';
import { freshTable, message, messageOfBytes, sessionId, testClient, withSeq } from './support/dynamodb.ts';

const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let store: AgentStore;

beforeAll(async () => {
  table = await freshTable(client, 'limits');
  store = dynamodbStore({ client, tableName: table.tableName });
});
afterAll(async () => {
  await store?.close();
  await table?.drop();
  client.destroy();
});

it('declares its limits: 1 MiB per message, 91 messages and 3,400,000 bytes per append', () => {
  expect(store.limits).toEqual({
    maxMessageBytes: 1024 * 1024,
    maxMessagesPerAppend: 91,
    maxAppendBytes: 3_400_000,
  });
  expect(DYNAMODB_LIMITS).toEqual(store.limits);
});

it('splits a 1 MiB message into items under 400 KB and reassembles it, multibyte text included', async () => {
  const id = sessionId();
  // 'é' is two bytes and '😀' four, so piece boundaries fall inside characters unless split with care.
  const big = messageOfBytes(DYNAMODB_LIMITS.maxMessageBytes, 'é😀é');
  const small = [message('before'), message('after')];
  expect(messageByteLength(big)).toBe(1024 * 1024);
  await store.append(id, { expectedSeq: 0, messages: [small[0]!, big, small[1]!], lease: null });

  const items = await rawItems(client, table.tableName, id);
  expect(items.map((item) => item.sk!.S)).toEqual([
    rawMessageSk(1),
    rawMessageSk(2),
    `${rawMessageSk(2)}#001`,
    `${rawMessageSk(2)}#002`,
    rawMessageSk(3),
    'session',
  ]);
  expect(items[1]!.parts).toEqual({ N: '2' });
  const pieces = items.slice(1, 4).map((item) => item.body!.S!);
  for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThan(400 * 1024);
  expect(pieces.join('')).toBe(JSON.stringify(big));
  expect(Number(items[5]!.headSeq!.N)).toBe(3);

  const loaded = await store.load(id);
  expect(loaded?.messages).toEqual(withSeq([small[0]!, big, small[1]!]));
  expect((await store.load(id, { afterSeq: 1 }))?.messages.map((m) => m.seq)).toEqual([2, 3]);
  expect((await store.load(id, { afterSeq: 2 }))?.messages.map((m) => m.seq)).toEqual([3]);

  // A lost piece is reported, never glued over.
  await client.send(
    new DeleteItemCommand({
      TableName: table.tableName,
      Key: { pk: { S: id }, sk: { S: `${rawMessageSk(2)}#002` } },
    }),
  );
  const error = await store.load(id).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CorruptRecordError);
  expect(error).toMatchObject({ sessionId: id, seq: 2 });
});

it('commits 91 messages in one transaction and refuses 92 or 100 before any call', async () => {
  const id = sessionId();
  const many = Array.from({ length: 91 }, (_, i) => message(`m${i}`));
  expect(await store.append(id, { expectedSeq: 0, messages: many, lease: null })).toEqual({ headSeq: 91 });
  expect((await store.load(id))?.messages).toEqual(withSeq(many));

  for (const count of [92, 100]) {
    const other = sessionId();
    const error = await store
      .append(other, {
        expectedSeq: 0,
        messages: Array.from({ length: count }, () => message()),
        lease: null,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ subject: 'append', size: count, limit: 91 });
    expect(await rawItems(client, table.tableName, other)).toEqual([]);
  }
});

it('refuses appends over the declared byte budget, writing nothing', async () => {
  const id = sessionId();
  // Four 1 MiB messages are fine one by one but over the append's byte budget together.
  const big = Array.from({ length: 4 }, () => messageOfBytes(1024 * 1024));
  const byBytes = await store
    .append(id, { expectedSeq: 0, messages: big, lease: null })
    .catch((e: unknown) => e);
  expect(byBytes).toBeInstanceOf(PayloadTooLargeError);
  expect(byBytes).toMatchObject({ subject: 'append', size: 4 * 1024 * 1024, limit: 3_400_000 });
  expect(await rawItems(client, table.tableName, id)).toEqual([]);

  // Over the message limit by one byte: refused before any call too.
  const over = await store
    .append(id, { expectedSeq: 0, messages: [messageOfBytes(1024 * 1024 + 1)], lease: null })
    .catch((e: unknown) => e);
  expect(over).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', subject: 'message', limit: 1024 * 1024 });

  // Three of them fit.
  expect(await store.append(id, { expectedSeq: 0, messages: big.slice(0, 3), lease: null })).toEqual({
    headSeq: 3,
  });
  expect((await store.load(id))?.messages).toEqual(withSeq(big.slice(0, 3)));
});
