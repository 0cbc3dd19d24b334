import { CorruptRecordError, type LoadOptions, type LoadResult, type MessageRecord } from '@agentstore/core';
import { validateLoadOptions, validateSessionId } from '@agentstore/core/store';
import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import { A } from './attributes.ts';
import type { StoreContext } from './context.ts';
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

/** Re-reads for a tail the first read missed (an append that landed between its pages). */
const TAIL_READS = 2;

/**
 * One Query on the session's partition (more only past 1 MB): messages after `afterSeq`, then the
 * session item, which sorts last. Messages past the session's head are not returned; a seq
 * missing below the head is a CorruptRecordError.
 */
export async function loadSession(
  context: StoreContext,
  sessionId: string,
  options: LoadOptions = {},
): Promise<LoadResult | null> {
  validateSessionId(sessionId);
  validateLoadOptions(options);
  const afterSeq = options.afterSeq ?? 0;
  const items = await queryItems(context, sessionId, afterSeq > 0 ? { from: messageSk(afterSeq + 1) } : {});
  const at = items.findIndex((item) => item[A.sk]?.S === SESSION_SK);
  if (at === -1) return null;
  const session = decodeSession(sessionId, items[at]!);
  let messages = decodeMessages(sessionId, items.slice(0, at));
  for (let read = 0; read < TAIL_READS; read++) {
    const seen = messages.length > 0 ? messages[messages.length - 1]!.seq : afterSeq;
    if (seen >= session.headSeq) break;
    // The session item was read after the messages; a commit in between is fetched here.
    const tail = await queryItems(context, sessionId, {
      from: messageSk(seen + 1),
      to: `${messageSk(session.headSeq)}#~`,
    });
    messages = messages.concat(decodeMessages(sessionId, tail));
  }
  const result: MessageRecord[] = [];
  let expected = afterSeq + 1;
  for (const message of messages) {
    if (message.seq > session.headSeq) break;
    if (message.seq !== expected) {
      throw new CorruptRecordError({
        sessionId,
        seq: expected,
        reason: 'message is missing below the head seq',
      });
    }
    result.push(message);
    expected++;
  }
  if (expected <= session.headSeq) {
    throw new CorruptRecordError({
      sessionId,
      seq: expected,
      reason: 'message is missing below the head seq',
    });
  }
  return { session, messages: result };
}
