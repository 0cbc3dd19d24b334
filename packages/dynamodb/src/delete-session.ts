import { validateSessionId } from '@agentstore/core/store';
import { BatchWriteItemCommand, DeleteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { A } from './attributes.ts';
import { backoff, type StoreContext, UNPROCESSED_ATTEMPTS } from './context.ts';
import { SESSION_SK } from './keys.ts';
import { queryItems } from './load.ts';

const BATCH_WRITE_ITEMS = 25;

/**
 * Deletes the session item first (so a delete cut short leaves no half session that loads: the
 * rest is unreachable, and running deleteSession again removes it), then every other item of the
 * partition with BatchWriteItem, 25 at a time. Not atomic: DynamoDB cannot delete a partition in
 * one call.
 */
export async function deleteSession(context: StoreContext, sessionId: string): Promise<{ deleted: boolean }> {
  validateSessionId(sessionId);
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

/** Deletes every item left in a session's partition, 25 per BatchWriteItem; returns how many. */
export async function deletePartition(context: StoreContext, sessionId: string): Promise<number> {
  const rest = await queryItems(context, sessionId, {}, [A.pk, A.sk]);
  for (let start = 0; start < rest.length; start += BATCH_WRITE_ITEMS) {
    let requests: WriteRequest[] = rest
      .slice(start, start + BATCH_WRITE_ITEMS)
      .map((item) => ({ DeleteRequest: { Key: { [A.pk]: item[A.pk]!, [A.sk]: item[A.sk]! } } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt >= UNPROCESSED_ATTEMPTS)
        throw new Error(`DynamoDB left items unprocessed ${attempt} times; try again later`);
      if (attempt > 0) await backoff(attempt);
      const { UnprocessedItems } = await context.client.send(
        new BatchWriteItemCommand({ RequestItems: { [context.tableName]: requests } }),
      );
      requests = UnprocessedItems?.[context.tableName] ?? [];
    }
  }
  return rest.length;
}
