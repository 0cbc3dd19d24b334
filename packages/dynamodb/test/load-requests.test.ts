import { SessionBusyError } from '@agentstore/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
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
 * What a load costs in requests (README, "How a load works"): the session item, the messages past
 * `afterSeq` up to its head (one Query, more pages past 1 MB), the session item's `incarnation`
 * again. A session replaced under the same id meanwhile makes it read again, a bounded number of
 * times.
 */
const client = testClient();
const requests = recordRequests(client);
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'load-requests');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const counted = async <T>(fn: () => Promise<T>) => {
  requests.length = 0;
  const result = await fn();
  return { result, requests: [...requests] };
};

it('a load is GetItem, Query, GetItem; 1 request when the session is absent or nothing is past afterSeq', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName, verifyTable: false });
  const id = sessionId('rt');
  expect(await counted(() => store.load(id))).toEqual({ result: null, requests: ['GetItemCommand'] });
  await store.append(id, {
    expectedSeq: 0,
    messages: [message('a'), message('b')],
    session: { init: init() },
    lease: null,
  });
  const full = await counted(() => store.load(id));
  expect(full.result?.messages.map((m) => m.content)).toEqual(['a', 'b']);
  expect(full.requests).toEqual(['GetItemCommand', 'QueryCommand', 'GetItemCommand']);
  const tail = await counted(() => store.load(id, { afterSeq: 1 }));
  expect(tail.result?.messages.map((m) => m.content)).toEqual(['b']);
  expect(tail.requests).toEqual(['GetItemCommand', 'QueryCommand', 'GetItemCommand']);
  const none = await counted(() => store.load(id, { afterSeq: 2 }));
  expect(none.result?.messages).toEqual([]);
  expect(none.requests).toEqual(['GetItemCommand']);
});

it('a session replaced during every read fails with SessionBusyError after 3 reads, never a mix', async () => {
  const id = sessionId('churn');
  const writer = dynamodbStore({ client, tableName: table.tableName, verifyTable: false });
  const create = () =>
    writer.append(id, { expectedSeq: 0, messages: [message('x')], session: { init: init() }, lease: null });
  await create();
  // A loader whose every Query is followed by a delete and re-create of the session.
  const churning = testClient();
  const send = churning.send.bind(churning);
  let queries = 0;
  churning.send = (async (command: { constructor: { name: string } }) => {
    const output = await send(command as never);
    if (command.constructor.name === 'QueryCommand') {
      queries++;
      await deleteSessionItem(client, table.tableName, id);
      await create();
    }
    return output;
  }) as typeof churning.send;
  const loader = dynamodbStore({ client: churning, tableName: table.tableName, verifyTable: false });
  const error = await loader.load(id).catch((e: unknown) => e);
  churning.destroy();
  expect(error).toBeInstanceOf(SessionBusyError);
  expect(error).toMatchObject({ code: 'SESSION_BUSY', sessionId: id });
  expect(queries).toBe(3);
});
