import { type TransactWriteItem, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { errorName, type StoreContext } from './context.ts';
import { SESSION_SK } from './keys.ts';
import { MAX_TRANSACTION_ITEMS } from './limits.ts';
import { queryItems } from './load.ts';

/**
 * Message items left in a partition whose session is gone (its item expired by TTL, or a
 * deletion cut short) would block a new session with the same id: its first append's Puts are
 * conditioned on their keys being new. They are deleted in transactions that each also check the
 * session is still empty (absent or head 0), so a session created meanwhile by another writer is
 * never touched. Returns false when that check failed (someone else's session is there now).
 */
export async function purgeOrphanMessages(context: StoreContext, sessionId: string): Promise<boolean> {
  const keys = (await queryItems(context, sessionId, {}, [A.pk, A.sk])).filter(
    (item) => item[A.sk]?.S !== SESSION_SK,
  );
  const condition = 'attribute_not_exists(#pk) OR #headSeq = :zero';
  for (let start = 0; start < keys.length; start += MAX_TRANSACTION_ITEMS - 1) {
    const deletes: TransactWriteItem[] = keys.slice(start, start + MAX_TRANSACTION_ITEMS - 1).map((item) => ({
      Delete: { TableName: context.tableName, Key: { [A.pk]: item[A.pk]!, [A.sk]: item[A.sk]! } },
    }));
    try {
      await context.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: context.tableName,
                Key: { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } },
                ConditionExpression: condition,
                ExpressionAttributeNames: namesIn(condition),
                ExpressionAttributeValues: { ':zero': { N: '0' } },
              },
            },
            ...deletes,
          ],
        }),
      );
    } catch (error) {
      if (errorName(error) === 'TransactionCanceledException') return false;
      throw error;
    }
  }
  return true;
}
