import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { dynamodbStore, storeFromUrl } from '../src/index.ts';
import { freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';

const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'Url-Case');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

it('opens the table a dynamodb:// URL names (its case kept), at the endpoint and region of its query', async () => {
  const writer = dynamodbStore({ client, tableName: table.tableName });
  const id = sessionId();
  const { epoch } = await writer.acquireLease(id, { holder: 'h', ttlMs: 10_000, init: init() });
  await writer.append(id, {
    expectedSeq: 0,
    messages: [message('hi', { id: 'm1' })],
    lease: { holder: 'h', epoch },
  });
  // Credentials come from the SDK's chain, as for a user; DynamoDB Local accepts any.
  process.env.AWS_ACCESS_KEY_ID ??= 'agentstore';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'agentstore';
  const store = storeFromUrl(
    `dynamodb://${table.tableName}?region=us-east-1&endpoint=${inject('dynamodbEndpoint')}`,
  );
  try {
    expect((await store.load(id))!.messages.map((m) => m.id)).toEqual(['m1']);
  } finally {
    await store.close();
  }
});

it('refuses a URL without a table', () => {
  expect(() => storeFromUrl('dynamodb://?region=x')).toThrow(/dynamodb:\/\/TABLE/);
});
