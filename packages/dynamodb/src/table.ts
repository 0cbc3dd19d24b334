import { InvalidArgumentError } from '@agentstore/core';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { A, SESSIONS_INDEX } from './attributes.ts';
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
 * - the sparse `sessions` index (`kind` = 'session' → `pk`), projecting only the fields
 *   listSessions filters on, so appends (which change headSeq, state, updatedAt) never write to it.
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
      { AttributeName: A.kind, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: A.pk, KeyType: 'HASH' },
      { AttributeName: A.sk, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: SESSIONS_INDEX,
        KeySchema: [
          { AttributeName: A.kind, KeyType: 'HASH' },
          { AttributeName: A.pk, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [A.agentName, A.ownerId, A.tenantId] },
      },
    ],
  };
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
