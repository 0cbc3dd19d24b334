import { randomUUID } from 'node:crypto';
import type { MessageRecord, NewMessage, SessionInit } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { DeleteItemCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createTable } from '../../src/index.ts';

/** A client for the shared DynamoDB Local; any credentials work there. */
export function testClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
}

/** A fresh table with a random name; `drop` deletes it. */
export async function freshTable(client: DynamoDBClient, label: string) {
  const tableName = `agentstore-${label}-${randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
  return {
    tableName,
    drop: () => client.send(new DeleteTableCommand({ TableName: tableName })).then(() => {}),
  };
}

export const sessionId = (label = 's') => `${label}-${randomUUID()}`;

export const init = (overrides: Partial<SessionInit> = {}): SessionInit => ({
  agentName: 'agent',
  ownerId: null,
  tenantId: null,
  state: null,
  ...overrides,
});

let counter = 0;
export function message(content = 'hello', overrides: Partial<NewMessage> = {}): NewMessage {
  counter++;
  return {
    id: `m-${counter}-${randomUUID().slice(0, 8)}`,
    role: 'user',
    content,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

export const withSeq = (messages: NewMessage[], from = 1): MessageRecord[] =>
  messages.map((m, i) => ({ ...m, seq: from + i }));

/** A message whose `messageByteLength` is exactly `bytes`. */
export function messageOfBytes(bytes: number, fill = 'x'): NewMessage {
  const base = message('');
  const room = bytes - messageByteLength(base);
  const repeats = Math.floor(room / Buffer.byteLength(fill));
  const content = fill.repeat(repeats) + 'x'.repeat(room - repeats * Buffer.byteLength(fill));
  const result = { ...base, content };
  if (messageByteLength(result) !== bytes)
    throw new Error(`cannot build a message of exactly ${bytes} bytes with ${fill}`);
  return result;
}

/** Records the name of every request the client sends (at finalizeRequest: retries included). */
export function recordRequests(client: DynamoDBClient): string[] {
  const requests: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requests.push(String(context.commandName));
      return next(args);
    },
    { step: 'finalizeRequest', name: 'recordRequests' },
  );
  return requests;
}

/** What DynamoDB TTL (or a deleteSession cut short) does: the session item goes, its messages stay. */
export const deleteSessionItem = (client: DynamoDBClient, tableName: string, id: string) =>
  client.send(new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: id }, sk: { S: 'session' } } }));
