import {
  type AttributeValue,
  DescribeTableCommand,
  type DynamoDBClient,
  ScanCommand,
  UpdateItemCommand,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { A, namesIn } from './attributes.ts';
import { errorName, sleep } from './context.ts';
import { indexSets } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import { decodeSession } from './session-item.ts';
import { indexDefinitions, tableDefinition } from './table.ts';

export interface UpgradeTableResult {
  /** Indexes this call created (and waited for). */
  createdIndexes: string[];
  /** Session items that got their index attributes. */
  backfilled: number;
}

/**
 * Brings a table made by @agentstore/dynamodb 0.1 (one `sessions` index) to the current layout:
 * creates each missing index (one UpdateTable at a time, waiting until ACTIVE), then gives every
 * session item without them its index attributes (a Scan of the table, one conditional
 * UpdateItem per session; `idleAt` = its last append). Idempotent; safe while stores use the
 * table (sessions created meanwhile already carry the attributes). The old `sessions` index is
 * left for you to delete once no 0.1 store uses the table.
 */
export async function upgradeTable(
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<UpgradeTableResult> {
  const deadline = Date.now() + (options.timeoutMs ?? 1_800_000);
  const waitActive = async () => {
    for (;;) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      const indexes = Table?.GlobalSecondaryIndexes ?? [];
      if (Table?.TableStatus === 'ACTIVE' && indexes.every((index) => index.IndexStatus === 'ACTIVE')) {
        return new Set(indexes.map((index) => index.IndexName));
      }
      if (Date.now() > deadline) throw new Error(`Table ${tableName} or an index is not ACTIVE in time`);
      await sleep(500);
    }
  };
  const createdIndexes: string[] = [];
  let existing = await waitActive();
  const attributes = tableDefinition(tableName).AttributeDefinitions!;
  for (const index of indexDefinitions()) {
    if (existing.has(index.IndexName)) continue;
    const used = new Set<string>(index.KeySchema.map((key) => key.AttributeName));
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributes.filter((a) => used.has(a.AttributeName!)),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
    createdIndexes.push(index.IndexName);
    existing = await waitActive();
  }
  let backfilled = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  const filter = '#sk = :session AND attribute_not_exists(#gA)';
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: filter,
        ExpressionAttributeNames: namesIn(filter),
        ExpressionAttributeValues: { ':session': { S: SESSION_SK } },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const sessionId = item[A.pk]!.S!;
      const session = decodeSession(sessionId, item);
      const values = {};
      const update = `SET ${indexSets(sessionId, session, Date.parse(session.updatedAt), values).join(', ')}`;
      const condition = 'attribute_exists(#pk)';
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } },
            UpdateExpression: update,
            ConditionExpression: condition,
            ExpressionAttributeNames: namesIn(update, condition),
            ExpressionAttributeValues: values,
          }),
        );
        backfilled += 1;
      } catch (error) {
        // Deleted since the Scan read it: nothing to index.
        if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { createdIndexes, backfilled };
}
