import { createHash } from 'node:crypto';
import { type AgentStore, defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { SESSION_SK } from '../src/keys.ts';
import { freshTable, init, message, testClient } from './support/dynamodb.ts';

/*
 * Every creation of a session id is a distinct incarnation (`incarnationId`, fixed at creation),
 * and it is part of each tool call's idempotency key: a provider call id like `call_0` that comes
 * back in a session re-created under a deleted one's id gets another key. A session created by an
 * earlier version keeps the old key formula, so an upgrade changes no stored call's key.
 */

const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'incarnations');
});
afterAll(() => table?.drop());
const anyInput = {
  '~standard': { version: 1 as const, vendor: 't', validate: (value: unknown) => ({ value }) },
};

/** Runs one `call_0` on `sessionId` and returns the idempotency key its handler got. */
async function keyOfCall0(store: AgentStore, sessionId: string): Promise<string> {
  let key = '';
  const agent = defineAgent({
    name: 'agent',
    instructions: 'Charge.',
    tools: {
      charge: tool({
        description: 'charges',
        input: anyInput,
        handler: (_input, ctx) => {
          key = ctx.idempotencyKey;
          return 'charged';
        },
      }),
    },
  });
  const llm = scriptedLlm([{ toolCalls: [{ id: 'call_0', name: 'charge', input: {} }] }, { text: 'Done.' }]);
  const result = await run(agent, { store, sessionId, message: 'Charge.', llm });
  expect(result.status).toBe('complete');
  return key;
}

const oldFormula = (sessionId: string, callId: string) =>
  `agentstore_${createHash('sha256').update(`${sessionId}\u0000${callId}`).digest('hex')}`;

describe('session incarnations', () => {
  it('a session re-created under a deleted session’s id gets a new incarnationId and new keys', async () => {
    const store = dynamodbStore({ client, tableName: table.tableName });
    const first = await keyOfCall0(store, 's');
    const firstIncarnation = (await store.load('s'))!.session.incarnationId;
    await store.deleteSession('s');
    const second = await keyOfCall0(store, 's');
    expect(typeof firstIncarnation).toBe('string');
    expect((await store.load('s'))!.session.incarnationId).not.toBe(firstIncarnation);
    expect(second).not.toBe(first);
  });

  it('a session created by an earlier version loads without an incarnationId and keeps the old key formula', async () => {
    const store = dynamodbStore({ client, tableName: table.tableName });
    await store.append('old', {
      expectedSeq: 0,
      messages: [message()],
      session: { init: init({ ownerId: null, tenantId: null }) },
      lease: null,
    });
    // As an earlier version wrote it: an `incarnation` without the prefix.
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'old' }, sk: { S: SESSION_SK } },
        UpdateExpression: 'SET incarnation = :old',
        ExpressionAttributeValues: { ':old': { S: 'AAAAAAAAAAAAAAAA' } },
      }),
    );
    expect((await store.load('old'))!.session).not.toHaveProperty('incarnationId');
    expect(await keyOfCall0(store, 'old')).toBe(oldFormula('old', 'call_0'));
  });
});
