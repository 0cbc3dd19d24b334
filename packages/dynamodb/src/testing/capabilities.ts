import type { MessageRecord } from '@agentstore/core';
import type { RawMessageRow, RawSessionRow, StoreCapabilities } from '@agentstore/core/testing';
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';

/**
 * The kit's capabilities, written against the raw client and the documented layout (README), not
 * the adapter's code: `pk` = session id; `sk` = 'session' | 'm#' + 16-digit seq | that + '#NNN'
 * for the further pieces of a large message (`parts` on the first says how many, and each piece
 * carries the first's `digest`); the message JSON in `body`; messages up to the session's `headSeq`.
 */
type Item = Record<string, AttributeValue>;

export const rawMessageSk = (seq: number) => `m#${String(seq).padStart(16, '0')}`;

/** Every item of a session's partition, in sort-key order. */
export async function rawItems(
  client: DynamoDBClient,
  tableName: string,
  sessionId: string,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: sessionId } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

export function dynamodbCapabilities(client: DynamoDBClient, tableName: string): Required<StoreCapabilities> {
  return {
    raw: {
      async session(sessionId): Promise<RawSessionRow | null> {
        const { Item } = await client.send(
          new GetItemCommand({
            TableName: tableName,
            Key: { pk: { S: sessionId }, sk: { S: 'session' } },
            ConsistentRead: true,
          }),
        );
        if (!Item) return null;
        return {
          id: Item.pk!.S!,
          headSeq: Number(Item.headSeq!.N),
          ownerId: Item.ownerId?.S ?? null,
          tenantId: Item.tenantId?.S ?? null,
          leaseHolder: Item.leaseHolder?.S ?? null,
          leaseEpoch: Number(Item.leaseEpoch?.N ?? 0),
        };
      },
      async messages(sessionId): Promise<RawMessageRow[]> {
        // Items past the session's head, and chunks past a message's `parts`, are leftovers of an
        // earlier session under this id (the layout lets a new session overwrite them).
        const items = await rawItems(client, tableName, sessionId);
        const head = Number(items.find((item) => item.sk!.S === 'session')?.headSeq?.N ?? 0);
        const bodies: { seq: number; body: string; parts: number; joined: number; digest?: string }[] = [];
        for (const item of items) {
          const sk = item.sk!.S!;
          if (/^m#\d{16}$/.test(sk) && Number(sk.slice(2)) <= head) {
            bodies.push({
              seq: Number(sk.slice(2)),
              body: item.body!.S!,
              parts: Number(item.parts?.N ?? 0),
              joined: 0,
              digest: item.digest?.S,
            });
          } else if (/^m#\d{16}#\d{3}$/.test(sk)) {
            const last = bodies[bodies.length - 1];
            if (
              last &&
              last.seq === Number(sk.slice(2, 18)) &&
              Number(sk.slice(19)) === last.joined + 1 &&
              last.joined < last.parts &&
              item.digest?.S === last.digest
            ) {
              last.body += item.body!.S!;
              last.joined += 1;
            }
          }
        }
        return bodies.map(({ seq, body }) => {
          const { id, role, content } = JSON.parse(body) as { id: string; role: string; content: string };
          return { seq, id, role, content };
        });
      },
    },

    async corrupt(sessionId, seq) {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: sessionId }, sk: { S: rawMessageSk(seq) }, body: { S: '{"id": "cut off' } },
        }),
      );
    },

    floor: {
      /** What a user would hand-write: one transaction, the head-seq-guarded update plus a Put per message. */
      async append(sessionId, expectedSeq, messages: MessageRecord[]) {
        await client.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: { pk: { S: sessionId }, sk: { S: 'session' } },
                  UpdateExpression: 'SET headSeq = :head, updatedAt = :now',
                  ConditionExpression: 'headSeq = :expected',
                  ExpressionAttributeValues: {
                    ':head': { N: String(expectedSeq + messages.length) },
                    ':expected': { N: String(expectedSeq) },
                    ':now': { S: new Date().toISOString() },
                  },
                },
              },
              ...messages.map(({ seq, ...message }) => ({
                Put: {
                  TableName: tableName,
                  Item: {
                    pk: { S: sessionId },
                    sk: { S: rawMessageSk(seq) },
                    body: { S: JSON.stringify(message) },
                  },
                },
              })),
            ],
          }),
        );
      },
    },
  };
}
