import type { DeleteIdleSessionsResult } from '@agentstore/core';
import { parseRetentionCursor, type RetentionRequest } from '@agentstore/core/store';
import {
  type AttributeValue,
  DeleteItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { errorName, expiredBeforeIso, type StoreContext } from './context.ts';
import { deletePartition } from './delete-session.ts';
import { GSI, idlePartitions, SHARDS } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import type { Item } from './session-item.ts';

/** Cursor: the shard being walked and the index's LastEvaluatedKey in it (null: from the start). */
type SweepPosition = [shard: number, startKey: Item | null];

function decodePosition(cursor: string | null): SweepPosition {
  if (cursor === null) return [0, null];
  return parseRetentionCursor(
    cursor,
    (parsed): parsed is SweepPosition =>
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      Number.isSafeInteger(parsed[0]) &&
      parsed[0] >= 0 &&
      parsed[0] < SHARDS &&
      (parsed[1] === null ||
        (typeof parsed[1] === 'object' &&
          Object.values(parsed[1] as object).every((v) => typeof v === 'object' && v !== null))),
  );
}

const isConditionFailure = (error: unknown) => errorName(error) === 'ConditionalCheckFailedException';

/**
 * Walks the `sessions-idle` index shard by shard, oldest `idleAt` first. `idleAt` starts at a
 * session's creation and is only moved up to its last append, so every idle session is in range.
 * Each candidate's session item is deleted by a conditional DeleteItem (last append before
 * `idleBefore` less `maxClockSkewMs`, no unexpired lease by the client clock): atomic with the check, so an append either
 * lands first (and the delete is refused) or finds no session. The session's message items follow
 * (the session is unloadable from the moment its item is gone). A refused candidate that is
 * active gets `idleAt` = its last append, out of this and later sweeps' range until it idles.
 */
export async function deleteIdleSessions(
  context: StoreContext,
  request: RetentionRequest,
): Promise<DeleteIdleSessionsResult> {
  const { limit, cursor } = request;
  // DynamoDB has no server clock: `updatedAt` is the last writer's. A session counts as idle only
  // past the declared skew bound, as a lease counts as expired only past it for a taker.
  const idleBeforeMs = request.idleBeforeMs - context.maxClockSkewMs;
  const idleBefore = new Date(idleBeforeMs).toISOString();
  let [shard, startKey] = decodePosition(cursor);
  const partitions = idlePartitions();
  const deleted: string[] = [];
  let examined = 0;
  while (shard < SHARDS && examined < limit) {
    const page = await context.client.send(
      new QueryCommand({
        TableName: context.tableName,
        IndexName: GSI.idle,
        KeyConditionExpression: '#gI = :partition AND #idleAt < :before',
        ExpressionAttributeNames: namesIn('#gI #idleAt'),
        ExpressionAttributeValues: {
          ':partition': { S: partitions[shard]! },
          ':before': { N: String(idleBeforeMs) },
        },
        Limit: limit - examined,
        ExclusiveStartKey: startKey ?? undefined,
      }),
    );
    const ids = (page.Items ?? []).map((item) => item[A.pk]!.S!);
    examined += ids.length;
    // A lease counts as expired only past the declared clock skew, as for a taker.
    const now = expiredBeforeIso(context, Date.now());
    await Promise.all(
      ids.map(async (id) => {
        if (await deleteIfIdle(context, id, idleBefore, now)) deleted.push(id);
      }),
    );
    if (page.LastEvaluatedKey) startKey = page.LastEvaluatedKey;
    else [shard, startKey] = [shard + 1, null];
  }
  return { deleted, nextCursor: shard >= SHARDS ? null : JSON.stringify([shard, startKey]) };
}

async function deleteIfIdle(context: StoreContext, sessionId: string, idleBefore: string, now: string) {
  const key = { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } };
  const condition =
    'attribute_exists(#pk) AND #updatedAt < :before AND (attribute_not_exists(#leaseHolder) OR #leaseExpiresAt <= :now)';
  try {
    await context.client.send(
      new DeleteItemCommand({
        TableName: context.tableName,
        Key: key,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesIn(condition),
        ExpressionAttributeValues: { ':before': { S: idleBefore }, ':now': { S: now } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old = (error as { Item?: Record<string, AttributeValue> }).Item;
    const updatedAt = old?.[A.updatedAt]?.S;
    if (updatedAt !== undefined && updatedAt >= idleBefore) {
      // Active: move its index entry up to its last append (only if the item still exists).
      const update = 'SET #idleAt = :at';
      const exists = 'attribute_exists(#pk)';
      await context.client
        .send(
          new UpdateItemCommand({
            TableName: context.tableName,
            Key: key,
            UpdateExpression: update,
            ConditionExpression: exists,
            ExpressionAttributeNames: namesIn(update, exists),
            ExpressionAttributeValues: { ':at': { N: String(Date.parse(updatedAt)) } },
          }),
        )
        .catch((updateError: unknown) => {
          if (!isConditionFailure(updateError)) throw updateError;
        });
    }
    return false;
  }
  await deletePartition(context, sessionId);
  return true;
}
