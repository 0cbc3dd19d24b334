import { SchemaMissingError, StoreConfigurationError } from '@agentstore/core';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { A } from './attributes.ts';
import { errorName } from './context.ts';
import { tableDefinition } from './table.ts';

const STORE = '@agentstore/dynamodb';

export interface VerifyTableOptions {
  /** Also require TTL enabled on the `ttl` attribute (the store sets this when `ttlSeconds` is set). */
  ttl?: boolean;
}

export interface TableCheck {
  /** False when the table does not exist. */
  exists: boolean;
  /** True when the table and all its indexes are ACTIVE. */
  active: boolean;
  /** What differs from `tableDefinition()`; empty when the layout matches. */
  problems: string[];
  /** The part of `problems` about indexes: they break listing and retention, not reads and writes. */
  indexProblems: string[];
}

const keys = (schema: { AttributeName?: string; KeyType?: string }[] | undefined) =>
  (schema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');

/**
 * Compares a described table with `tableDefinition()`: key schema, key attribute types, every
 * index of the definition (keys and projected attributes). The one declared description drives
 * both `createTable` and this check, so a change of layout changes both.
 */
export function tableProblems(table: TableDescription, tableName: string): string[] {
  const wanted = tableDefinition(tableName);
  const problems: string[] = [];
  if (keys(table.KeySchema) !== keys(wanted.KeySchema)) {
    problems.push(`key schema is ${keys(table.KeySchema) || 'none'}, expected ${keys(wanted.KeySchema)}`);
  }
  const types = new Map((table.AttributeDefinitions ?? []).map((a) => [a.AttributeName, a.AttributeType]));
  for (const attribute of wanted.AttributeDefinitions ?? []) {
    const found = types.get(attribute.AttributeName);
    if (found !== undefined && found !== attribute.AttributeType) {
      problems.push(`attribute ${attribute.AttributeName} is ${found}, expected ${attribute.AttributeType}`);
    }
  }
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    const found = (table.GlobalSecondaryIndexes ?? []).find((i) => i.IndexName === index.IndexName);
    if (!found) {
      problems.push(`global secondary index ${index.IndexName} is missing`);
      continue;
    }
    if (keys(found.KeySchema) !== keys(index.KeySchema)) {
      problems.push(
        `index ${index.IndexName} has keys ${keys(found.KeySchema)}, expected ${keys(index.KeySchema)}`,
      );
    }
    // Enough is enough: ALL covers any projection, and KEYS_ONLY asks for nothing more.
    const projection = found.Projection;
    const needed =
      index.Projection?.ProjectionType === 'KEYS_ONLY' ? [] : (index.Projection?.NonKeyAttributes ?? []);
    if (projection?.ProjectionType !== 'ALL' && needed.length > 0) {
      const projected = new Set(projection?.NonKeyAttributes ?? []);
      const missing = needed.filter((name) => !projected.has(name));
      if (missing.length > 0)
        problems.push(`index ${index.IndexName} does not project ${missing.join(', ')}`);
    }
  }
  return problems;
}

/** Describes the table and reports how it differs from what the store needs. Read-only. */
export async function describeTableCheck(client: DynamoDBClient, tableName: string): Promise<TableCheck> {
  let table: TableDescription | undefined;
  try {
    table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (errorName(error) === 'ResourceNotFoundException')
      return { exists: false, active: false, problems: [], indexProblems: [] };
    throw error;
  }
  if (!table) return { exists: false, active: false, problems: [], indexProblems: [] };
  const active =
    table.TableStatus === 'ACTIVE' &&
    (table.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
  const problems = tableProblems(table, tableName);
  const indexProblems = problems.filter(
    (p) => p.startsWith('index ') || p.startsWith('global secondary index '),
  );
  return { exists: true, active, problems, indexProblems };
}

/** The table exists with another layout than `tableDefinition()`. */
export function tableLayoutError(tableName: string, problems: string[]): StoreConfigurationError {
  return new StoreConfigurationError({
    store: STORE,
    problem: 'table-layout',
    detail: `table ${tableName} does not have the layout the store needs: ${problems.join('; ')}.`,
    fix: `for a table made by an older @agentstore/dynamodb, run \`await upgradeTable(client, '${tableName}')\` (adds the missing indexes); otherwise recreate it from \`tableDefinition('${tableName}')\`, or point the store at a table made by \`createTable\`.`,
  });
}

/** True when TTL is on (or being turned on) for the `ttl` attribute. */
export async function ttlEnabled(client: DynamoDBClient, tableName: string): Promise<boolean> {
  const { TimeToLiveDescription: ttl } = await client.send(
    new DescribeTimeToLiveCommand({ TableName: tableName }),
  );
  return (
    (ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING') &&
    ttl.AttributeName === A.ttl
  );
}

/**
 * The verify-only check of an existing table (made by `createTable`, CDK, Terraform…): it exists,
 * its keys and indexes are those of `tableDefinition()`, and, with `ttl`, TTL is enabled on the
 * `ttl` attribute. Needs only `dynamodb:DescribeTable` (and `DescribeTimeToLive` with `ttl`).
 * Throws `SchemaMissingError` or `StoreConfigurationError` saying what to change.
 */
export async function verifyTable(
  client: DynamoDBClient,
  tableName: string,
  options: VerifyTableOptions = {},
): Promise<void> {
  const readiness = await tableReadiness(client, tableName, options);
  const problem = readiness.data ?? readiness.indexes;
  if (problem) throw problem;
}

/**
 * What the table allows, for the store: `data` is the error every operation fails with (no
 * table, other keys, TTL off while needed), `indexes` the one listing and retention fail with (an
 * index missing or different: a table of an older version, before `upgradeTable`). Reads and
 * writes keep working on such a table, so a rolling upgrade has no downtime.
 */
export async function tableReadiness(
  client: DynamoDBClient,
  tableName: string,
  options: VerifyTableOptions = {},
): Promise<{ data: Error | null; indexes: Error | null }> {
  const check = await describeTableCheck(client, tableName);
  if (!check.exists) {
    const missing = new SchemaMissingError({
      store: STORE,
      missing: `table ${tableName}`,
      fix: `create it once with \`await createTable(client, '${tableName}')\`, or from \`tableDefinition('${tableName}')\` in your infrastructure code (CDK, Terraform, CloudFormation).`,
    });
    return { data: missing, indexes: missing };
  }
  const keyProblems = check.problems.filter((p) => !check.indexProblems.includes(p));
  if (keyProblems.length > 0) {
    const error = tableLayoutError(tableName, check.problems);
    return { data: error, indexes: error };
  }
  const indexes = check.indexProblems.length > 0 ? tableLayoutError(tableName, check.indexProblems) : null;
  if (options.ttl && !(await ttlEnabled(client, tableName))) {
    const error = new StoreConfigurationError({
      store: STORE,
      problem: 'ttl-disabled',
      detail: `ttlSeconds is set, but TTL is not enabled on the "${A.ttl}" attribute of table ${tableName}, so nothing would ever expire.`,
      fix: `enable it (aws dynamodb update-time-to-live --table-name ${tableName} --time-to-live-specification "Enabled=true, AttributeName=${A.ttl}", or \`createTable\`), or drop ttlSeconds.`,
    });
    return { data: error, indexes: indexes ?? error };
  }
  return { data: null, indexes };
}
