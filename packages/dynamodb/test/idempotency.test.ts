import { type AgentStore, SeqConflictError } from '@agentstore/core';
import { type DynamoDBClient, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appendToken, buildAppendTransaction } from '../src/append-transaction.ts';
import type { StoreContext } from '../src/context.ts';
import { dynamodbStore } from '../src/index.ts';
import { dynamodbCapabilities } from '../src/testing/capabilities.ts';
import { freshTable, message, sessionId, testClient, withSeq } from './support/dynamodb.ts';

const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let store: AgentStore;
let context: StoreContext;
let raw: ReturnType<typeof dynamodbCapabilities>['raw'];

beforeAll(async () => {
  table = await freshTable(client, 'idempotency');
  store = dynamodbStore({ client, tableName: table.tableName });
  context = { client, tableName: table.tableName, ttlSeconds: null, maxClockSkewMs: 0 };
  raw = dynamodbCapabilities(client, table.tableName).raw;
});
afterAll(async () => {
  await store?.close();
  await table?.drop();
  client.destroy();
});

const errorName = (error: unknown) => (error as Error).name;

it('a resent transaction with the same ClientRequestToken succeeds without appending twice', async () => {
  const id = sessionId();
  await store.append(id, { expectedSeq: 0, messages: [message()], lease: null });
  const input = { expectedSeq: 1, messages: [message('once'), message('only')], lease: null };
  const token = appendToken(table.tableName, id, input);
  const transaction = buildAppendTransaction(context, id, input, Date.now(), token);

  await client.send(new TransactWriteItemsCommand(transaction));
  // What the SDK does after a lost response: the same request again. DynamoDB answers success.
  await client.send(new TransactWriteItemsCommand(transaction));
  expect((await raw.messages(id)).map((m) => m.content)).toEqual(['hello', 'once', 'only']);
  expect((await raw.session(id))?.headSeq).toBe(3);

  // The same token with other parameters is refused outright, and nothing is written.
  const changed = buildAppendTransaction(context, id, input, Date.now() + 1000, token);
  const mismatch = await client.send(new TransactWriteItemsCommand(changed)).catch((e: unknown) => e);
  expect(errorName(mismatch)).toBe('IdempotentParameterMismatchException');

  // Without a token the resend fails its own head-seq guard: a false conflict the token prevents.
  const { ClientRequestToken: _, ...untokened } = buildAppendTransaction(
    context,
    id,
    { ...input, expectedSeq: 3 },
    Date.now(),
    token,
  );
  await client.send(new TransactWriteItemsCommand(untokened));
  const resent = await client.send(new TransactWriteItemsCommand(untokened)).catch((e: unknown) => e);
  expect(errorName(resent)).toBe('TransactionCanceledException');
  expect((await raw.session(id))?.headSeq).toBe(5);
});

it('each append call draws its own token, so repeating an append is a SeqConflictError', async () => {
  const id = sessionId();
  const input = { expectedSeq: 0, messages: [message()], lease: null };
  expect(appendToken(table.tableName, id, input)).not.toBe(appendToken(table.tableName, id, input));
  expect(appendToken(table.tableName, id, input)).toMatch(/^[0-9a-f]{36}$/);
  await store.append(id, input);
  await expect(store.append(id, input)).rejects.toBeInstanceOf(SeqConflictError);
  expect(await raw.messages(id)).toHaveLength(1);
});

/** Lets the first TransactWriteItems commit, then loses its response, as a dropped connection would. */
function loseFirstTransactResponse(target: DynamoDBClient): { sends: number } {
  const seen = { sends: 0 };
  target.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      seen.sends++;
      const result = await next(args);
      if (seen.sends === 1)
        throw Object.assign(new Error('socket hang up after commit'), { code: 'ECONNRESET' });
      return result;
    },
    { step: 'deserialize', name: 'loseFirstTransactResponse' },
  );
  return seen;
}

it('a store append whose response is lost is retried by the SDK under the same token and lands once', async () => {
  const flaky = testClient();
  const seen = loseFirstTransactResponse(flaky);
  const flakyStore = dynamodbStore({ client: flaky, tableName: table.tableName });
  const id = sessionId();
  const batch = [message('a'), message('b')];
  expect(await flakyStore.append(id, { expectedSeq: 0, messages: batch, lease: null })).toEqual({
    headSeq: 2,
  });
  expect(seen.sends).toBe(2);
  expect((await store.load(id))?.messages).toEqual(withSeq(batch));
  await flakyStore.close();
  flaky.destroy();
});
