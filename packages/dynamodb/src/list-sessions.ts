import type { ListSessionsInput, ListSessionsResult, SessionRecord } from '@agentstore/core';
import { type AttributeValue, BatchGetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { backoff, type StoreContext, UNPROCESSED_ATTEMPTS } from './context.ts';
import { GSI, INDEX_ATTRIBUTE, listingIndex } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import { decodeSession, type Item } from './session-item.ts';

const BATCH_GET_KEYS = 100;

/** Full session items for `ids` (strongly consistent), in any order; deleted ones are absent. */
async function getSessions(context: StoreContext, ids: string[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  for (let start = 0; start < ids.length; start += BATCH_GET_KEYS) {
    let keys: Item[] = ids
      .slice(start, start + BATCH_GET_KEYS)
      .map((id) => ({ [A.pk]: { S: id }, [A.sk]: { S: SESSION_SK } }));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt >= UNPROCESSED_ATTEMPTS)
        throw new Error(`DynamoDB left items unprocessed ${attempt} times; try again later`);
      if (attempt > 0) await backoff(attempt);
      const { Responses, UnprocessedKeys } = await context.client.send(
        new BatchGetItemCommand({
          RequestItems: { [context.tableName]: { Keys: keys, ConsistentRead: true } },
        }),
      );
      for (const item of Responses?.[context.tableName] ?? []) found.set(item[A.pk]!.S!, item);
      keys = UnprocessedKeys?.[context.tableName]?.Keys ?? [];
    }
  }
  return found;
}

/** UTF-8 byte order: DynamoDB's order of string sort keys, so merged shards page like one index. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The index that holds exactly the sessions the filters select (one per combination, see
 * index-keys.ts) is queried in each of its partition values (one when an owner is given, SHARDS
 * otherwise) from the cursor on, for up to `limit + 1` ids each, and the merge of those is
 * exactly the next `limit + 1` ids: about one page of index entries whatever the filters. The
 * filters are also checked on the projected fields (a FilterExpression), so a value long enough
 * to be stored as a digest never mixes in another. The page's full records then come from the
 * table with BatchGetItem. GSIs are eventually consistent on real DynamoDB, so a session created
 * a moment ago can be missing from a listing for a moment. Order is DynamoDB's: UTF-8 bytes of
 * the id.
 */
export async function listSessions(
  context: StoreContext,
  { ownerId, tenantId, agentName, limit, cursor }: ListSessionsInput,
): Promise<ListSessionsResult> {
  const { index, partitions } = listingIndex({ ownerId, tenantId, agentName });
  const attribute = A[INDEX_ATTRIBUTE[index]];
  const values: Record<string, AttributeValue> = {};
  let keyCondition = `#${attribute} = :partition`;
  if (cursor != null) {
    keyCondition += ' AND #pk > :cursor';
    values[':cursor'] = { S: cursor };
  }
  const filters: string[] = [];
  for (const [name, value] of [
    ['ownerId', ownerId],
    ['tenantId', tenantId],
    ['agentName', agentName],
  ] as const) {
    if (value === undefined) continue;
    filters.push(`#${name} = :${name}`);
    values[`:${name}`] = { S: value };
  }
  const filter = filters.length > 0 ? filters.join(' AND ') : undefined;
  const names = namesIn(keyCondition, filter, '#pk');
  const perPartition = await Promise.all(
    partitions.map(async (partition) => {
      const ids: string[] = [];
      let startKey: Item | undefined;
      do {
        const page = await context.client.send(
          new QueryCommand({
            TableName: context.tableName,
            IndexName: GSI[index],
            KeyConditionExpression: keyCondition,
            FilterExpression: filter,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...values, ':partition': { S: partition } },
            ProjectionExpression: '#pk',
            Limit: limit + 1,
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) ids.push(item[A.pk]!.S!);
        startKey = page.LastEvaluatedKey;
      } while (startKey && ids.length <= limit);
      return ids.slice(0, limit + 1);
    }),
  );
  const ids = perPartition
    .flat()
    .sort(byBytes)
    .slice(0, limit + 1);
  const pageIds = ids.slice(0, limit);
  const items = await getSessions(context, pageIds);
  const sessions: SessionRecord[] = [];
  for (const id of pageIds) {
    const item = items.get(id);
    if (item) sessions.push(decodeSession(id, item));
  }
  return { sessions, nextCursor: ids.length > limit ? pageIds[pageIds.length - 1]! : null };
}
