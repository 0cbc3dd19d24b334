import { UnexpectedReplyError } from '@agentstore/core';
import {
  type CancellationReason,
  DeleteItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { backoff, errorName, type StoreContext } from './context.ts';
import { SESSION_SK } from './keys.ts';
import { MAX_TRANSACTION_ITEMS } from './limits.ts';
import type { Item } from './session-item.ts';

/** Deletes per transaction: the rest of the 100 items is the check that the session is still gone. */
const DELETES_PER_BATCH = MAX_TRANSACTION_ITEMS - 1;
const MAX_ATTEMPTS = 5;

/**
 * Deletes the session item first (so a delete cut short leaves no half session that loads: the
 * rest is unreachable, and running deleteSession again removes it), then the rest of the
 * partition in bounded batches (see `deletePartition`). Not atomic: DynamoDB cannot delete a
 * partition in one call.
 */
export async function deleteSession(context: StoreContext, sessionId: string): Promise<{ deleted: boolean }> {
  const { Attributes } = await context.client.send(
    new DeleteItemCommand({
      TableName: context.tableName,
      Key: { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } },
      ReturnValues: 'ALL_OLD',
    }),
  );
  const rest = await deletePartition(context, sessionId);
  return { deleted: Attributes !== undefined || rest > 0 };
}

/**
 * Deletes the items left in a session's partition once its session item is gone: a page of at
 * most 99 keys at a time (memory and each request stay bounded however long the session was),
 * each page in one transaction that also checks the session item is still absent. A new session
 * created under the same id meanwhile stops it: its items are never touched (the ones left behind
 * are overwritten or ignored by it, and go with its own deletion). Returns how many it deleted.
 */
export async function deletePartition(context: StoreContext, sessionId: string): Promise<number> {
  const condition = 'attribute_not_exists(#pk)';
  const sessionKey = { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } };
  let deleted = 0;
  let startKey: Item | undefined;
  for (;;) {
    const page = await context.client.send(
      new QueryCommand({
        TableName: context.tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': A.pk, '#sk': A.sk },
        ExpressionAttributeValues: { ':pk': { S: sessionId } },
        ProjectionExpression: '#pk, #sk',
        ConsistentRead: true,
        Limit: DELETES_PER_BATCH,
        ExclusiveStartKey: startKey,
      }),
    );
    const keys = (page.Items ?? []).filter((item) => item[A.sk]?.S !== SESSION_SK);
    if (keys.length > 0) {
      const transaction = new TransactWriteItemsCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: context.tableName,
              Key: sessionKey,
              ConditionExpression: condition,
              ExpressionAttributeNames: namesIn(condition),
            },
          },
          ...keys.map((item) => ({
            Delete: { TableName: context.tableName, Key: { [A.pk]: item[A.pk]!, [A.sk]: item[A.sk]! } },
          })),
        ],
      });
      if (!(await sendDeletes(context, sessionId, transaction))) return deleted;
      deleted += keys.length;
    }
    startKey = page.LastEvaluatedKey;
    if (!startKey) return deleted;
  }
}

/** Cancellation codes that mean nothing was written and a resend may pass. */
const TRANSIENT = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

/**
 * Sends one batch of deletes. False when the check failed: a session under this id exists again.
 * A cancellation DynamoDB marks as transient is resent (at most MAX_ATTEMPTS times, then its error
 * is thrown as the SDK typed it); one for any other reason is an UnexpectedReplyError.
 */
async function sendDeletes(
  context: StoreContext,
  sessionId: string,
  transaction: TransactWriteItemsCommand,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await context.client.send(transaction);
      return true;
    } catch (error) {
      if (errorName(error) !== 'TransactionCanceledException') throw error;
      const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
      if (!reasons.some((reason) => TRANSIENT.has(reason.Code ?? ''))) {
        throw new UnexpectedReplyError({
          store: '@agentstore/dynamodb',
          operation: 'deleteSession (message items)',
          reply: reasons,
          sessionId,
        });
      }
      if (attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}
