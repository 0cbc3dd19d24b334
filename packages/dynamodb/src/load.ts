import { CorruptRecordError, type LoadOptions, type LoadResult, SessionBusyError } from '@agentstore/core';
import { type AttributeValue, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { backoff, type StoreContext } from './context.ts';
import { messageSk, SESSION_SK } from './keys.ts';
import { decodeMessages } from './message-items.ts';
import { decodeSession, type Item } from './session-item.ts';

/** Every item of a partition in the sort-key range, strongly consistent, across 1 MB pages. */
export async function queryItems(
  context: StoreContext,
  sessionId: string,
  range: { from?: string; to?: string } = {},
  /** Only these attributes (e.g. the keys, to delete them). */
  attributes?: string[],
): Promise<Item[]> {
  const values: Record<string, AttributeValue> = { ':pk': { S: sessionId } };
  let keyCondition = '#pk = :pk';
  if (range.from !== undefined && range.to !== undefined) {
    keyCondition += ' AND #sk BETWEEN :from AND :to';
    values[':from'] = { S: range.from };
    values[':to'] = { S: range.to };
  } else if (range.from !== undefined) {
    keyCondition += ' AND #sk >= :from';
    values[':from'] = { S: range.from };
  }
  const names: Record<string, string> = { '#pk': A.pk };
  if (range.from !== undefined) names['#sk'] = A.sk;
  const projection = attributes?.map((name, i) => {
    names[`#p${i}`] = name;
    return `#p${i}`;
  });
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await context.client.send(
      new QueryCommand({
        TableName: context.tableName,
        KeyConditionExpression: keyCondition,
        ExpressionAttributeNames: names,
        ProjectionExpression: projection?.join(', '),
        ExpressionAttributeValues: values,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    if (page.Items) items.push(...page.Items);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Reads of a session that another incarnation replaced mid-read before `SessionBusyError`. */
const LOAD_ATTEMPTS = 3;

/**
 * A consistent GetItem of the session item (only its key and `incarnation` when `check` is set:
 * the re-read that proves no other session replaced it).
 */
async function readSessionItem(context: StoreContext, sessionId: string, check = false) {
  const { Item } = await context.client.send(
    new GetItemCommand({
      TableName: context.tableName,
      Key: { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } },
      ConsistentRead: true,
      ...(check
        ? { ProjectionExpression: '#pk, #incarnation', ExpressionAttributeNames: namesIn('#pk #incarnation') }
        : {}),
    }),
  );
  return Item;
}

/**
 * Reads are read-committed, not snapshots: a Query over several pages (or even one) may see items
 * of two sessions under one id when the session is deleted and created again while it runs. So
 * a load reads the session item first (GetItem: head H, `incarnation` N), then the messages after
 * `afterSeq` up to H (a Query bounded by H, 1 MB pages), then N again (GetItem). Every message up
 * to H of session N had committed before the first read and overwrote whatever an earlier session
 * left at its seq; only a deletion or another session can change those items, and either changes
 * N. So when N is unchanged the messages read are exactly session N's; when not, the load starts
 * over (at most LOAD_ATTEMPTS times, then SessionBusyError). A seq missing below the head, or a
 * chunk that is not its message's, is then a CorruptRecordError. Requests: 1 when nothing is past
 * `afterSeq` (or the session is absent), else 2 + the Query's pages.
 */
export async function loadSession(
  context: StoreContext,
  sessionId: string,
  { afterSeq }: Required<LoadOptions>,
): Promise<LoadResult | null> {
  for (let attempt = 1; ; attempt++) {
    const loaded = await readOnce(context, sessionId, afterSeq);
    if (loaded !== 'replaced') return loaded;
    if (attempt >= LOAD_ATTEMPTS) throw new SessionBusyError({ sessionId, retryAfterMs: RETRY_AFTER_MS });
    await backoff(attempt);
  }
}

/** What a caller of a load that kept meeting replacements should wait before trying again. */
const RETRY_AFTER_MS = 100;

async function readOnce(
  context: StoreContext,
  sessionId: string,
  afterSeq: number,
): Promise<LoadResult | null | 'replaced'> {
  const item = await readSessionItem(context, sessionId);
  if (!item) return null;
  const session = decodeSession(sessionId, item);
  if (session.headSeq <= afterSeq) return { session, messages: [] };
  const items = await queryItems(context, sessionId, {
    from: messageSk(afterSeq + 1),
    // Its chunks too: `…#NNN` sorts between the head's message key and this.
    to: `${messageSk(session.headSeq)}#~`,
  });
  const check = await readSessionItem(context, sessionId, true);
  if (!check || check[A.incarnation]?.S !== item[A.incarnation]?.S) return 'replaced';
  const messages = decodeMessages(sessionId, items);
  let expected = afterSeq + 1;
  for (const message of messages) {
    if (message.seq !== expected) break;
    expected++;
  }
  if (expected <= session.headSeq) {
    throw new CorruptRecordError({
      sessionId,
      seq: expected,
      reason: 'message is missing below the head seq',
    });
  }
  return { session, messages };
}
