import { InvalidArgumentError } from '@agentstore/core';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { A } from './attributes.ts';
import { GSI, INDEX_ATTRIBUTE, type IndexName } from './index-keys.ts';
import { describeTableCheck, tableLayoutError, ttlEnabled } from './verify-table.ts';

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** DynamoDB's own table-name rule; anything else is rejected before a call. */
export function validateTableName(tableName: unknown): asserts tableName is string {
  if (typeof tableName !== 'string' || !TABLE_NAME.test(tableName)) {
    throw new InvalidArgumentError({
      argument: 'tableName',
      reason: 'must be 3-255 characters of A-Z, a-z, 0-9, "_", "-" and "."',
    });
  }
}

/**
 * The table agentstore needs, as a CreateTable input (copy it into CDK, Terraform or
 * CloudFormation if you manage tables there):
 * - `pk` (S) partition key = session id, `sk` (S) sort key = `m#<seq>` / `m#<seq>#<chunk>` / `session`;
 * - on-demand billing;
 * - nine sparse indexes on session items (see index-keys.ts): one per combination of
 *   listSessions filters (write-sharded partition values → `pk`, projecting only the filter
 *   fields) and one for
 *   retention (→ `idleAt`); their attributes are written at creation only, so appends (which
 *   change headSeq, state, updatedAt) never write to an index.
 * TTL on the `ttl` attribute is a separate call (UpdateTimeToLive); `createTable` makes both.
 */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  validateTableName(tableName);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: A.pk, AttributeType: 'S' },
      { AttributeName: A.sk, AttributeType: 'S' },
      ...([...Object.values(INDEX_ATTRIBUTE), 'gI'] as const).map((name) => ({
        AttributeName: A[name],
        AttributeType: 'S' as const,
      })),
      { AttributeName: A.idleAt, AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: A.pk, KeyType: 'HASH' },
      { AttributeName: A.sk, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: indexDefinitions(),
  };
}

/** The nine session indexes, as CreateTable (or UpdateTable `Create`) wants them. */
export function indexDefinitions() {
  const listing = (index: IndexName) => ({
    IndexName: GSI[index],
    KeySchema: [
      { AttributeName: A[INDEX_ATTRIBUTE[index]], KeyType: 'HASH' as const },
      { AttributeName: A.pk, KeyType: 'RANGE' as const },
    ],
    Projection: {
      ProjectionType: 'INCLUDE' as const,
      NonKeyAttributes: [A.agentName, A.ownerId, A.tenantId],
    },
  });
  return [
    ...(Object.keys(INDEX_ATTRIBUTE) as IndexName[]).map(listing),
    {
      IndexName: GSI.idle,
      KeySchema: [
        { AttributeName: A.gI, KeyType: 'HASH' as const },
        { AttributeName: A.idleAt, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' as const },
    },
  ];
}

export interface CreateTableOptions {
  /** How long to wait for the table and its index to become ACTIVE (default 5 minutes). */
  timeoutMs?: number;
}

const errorName = (error: unknown) => (error as { name?: string } | null)?.name;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates the table (see `tableDefinition`) when it does not exist and enables TTL on `ttl` when
 * it is off, then waits until the table and its index are ACTIVE. Describes before it creates: an
 * existing table is verified (same keys and indexes, else `StoreConfigurationError`) and never
 * re-created, so a role that may only describe a table made by IaC can run it too.
 */
export async function createTable(
  client: DynamoDBClient,
  tableName: string,
  options: CreateTableOptions = {},
): Promise<void> {
  const existing = await describeTableCheck(client, tableName);
  if (!existing.exists) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(tableName)));
    } catch (error) {
      // Another process created it between our describe and create.
      if (errorName(error) !== 'ResourceInUseException') throw error;
    }
  }
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  let check = existing;
  while (!check.active) {
    if (Date.now() > deadline)
      throw new Error(`Table ${tableName} is not ACTIVE after ${options.timeoutMs ?? 300_000} ms`);
    if (check !== existing) await sleep(500);
    check = await describeTableCheck(client, tableName);
  }
  if (check.problems.length > 0) throw tableLayoutError(tableName, check.problems);
  // A table we just created has TTL off; an existing one is asked first (a describe-only role).
  if (existing.exists && (await ttlEnabled(client, tableName))) return;
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: A.ttl, Enabled: true },
      }),
    );
  } catch (error) {
    // Enabled by a racing createTable meanwhile: DynamoDB says so with a ValidationException.
    if (
      !(
        errorName(error) === 'ValidationException' &&
        /already enabled/i.test(String((error as Error).message))
      )
    ) {
      throw error;
    }
  }
}
