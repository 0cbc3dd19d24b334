import {
  InvalidArgumentError,
  type ListSessionsInput,
  type ListSessionsResult,
  type SessionRecord,
  validateListSessionsInput,
} from '@agentstore/core';
import { type AttributeValue, BatchGetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { A, namesIn, SESSION_KIND, SESSIONS_INDEX } from './attributes.ts';
import { backoff, type StoreContext, UNPROCESSED_ATTEMPTS } from './context.ts';
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

/**
 * Ids come from the sparse `sessions` index (key `kind`, sort `pk`: ordered by id, the cursor is
 * a key condition), filtered there on the projected owner, tenant and agent name; the page's full
 * records then come from the table with BatchGetItem. The index is eventually consistent on real
 * DynamoDB, so a session created a moment ago can be missing from a listing for a moment.
 * Order is DynamoDB's: UTF-8 bytes of the id.
 */
export async function listSessions(
  context: StoreContext,
  { ownerId, tenantId, agentName, limit, cursor }: ListSessionsInput,
): Promise<ListSessionsResult> {
  validateListSessionsInput({ ownerId, tenantId, agentName, limit, cursor });
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError({ argument: 'limit', reason: 'must be a positive integer' });
  }
  const values: Record<string, AttributeValue> = { ':kind': { S: SESSION_KIND } };
  let keyCondition = '#kind = :kind';
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
  const ids: string[] = [];
  let startKey: Item | undefined;
  do {
    const page = await context.client.send(
      new QueryCommand({
        TableName: context.tableName,
        IndexName: SESSIONS_INDEX,
        KeyConditionExpression: keyCondition,
        FilterExpression: filter,
        ExpressionAttributeNames: namesIn(keyCondition, filter, '#pk'),
        ExpressionAttributeValues: values,
        ProjectionExpression: '#pk',
        // Without a filter every index entry counts; with one, read ahead more per page.
        Limit: filter ? Math.min(1000, Math.max(100, (limit + 1) * 4)) : limit + 1,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) ids.push(item[A.pk]!.S!);
    startKey = page.LastEvaluatedKey;
  } while (startKey && ids.length <= limit);
  const pageIds = ids.slice(0, limit);
  const items = await getSessions(context, pageIds);
  const sessions: SessionRecord[] = [];
  for (const id of pageIds) {
    const item = items.get(id);
    if (item) sessions.push(decodeSession(id, item));
  }
  return { sessions, nextCursor: ids.length > limit ? pageIds[pageIds.length - 1]! : null };
}
