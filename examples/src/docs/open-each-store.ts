// examples/src/docs/open-each-store.ts
import { type D1DatabaseLike, d1Store } from '@agentstore/d1';
import { createTable, dynamodbStore } from '@agentstore/dynamodb';
import { postgresStore } from '@agentstore/postgres';
import { redisStore } from '@agentstore/redis';
import { sqliteStore } from '@agentstore/sqlite';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';

// SQLite creates its tables when it opens the file.
export const openSqlite = (path: string) => sqliteStore({ path });

// PostgreSQL, D1 and DynamoDB never create their schema behind your back: create it once, at
// deploy or start-up (idempotent, safe to race). Until then every call fails with a
// SchemaMissingError that names the call to make.
export async function openPostgres(pool: Pool) {
  const store = postgresStore({ pool }); // behind PgBouncer in transaction mode: { preparedStatements: false }
  await store.migrate();
  return store;
}

export async function openD1(binding: D1DatabaseLike) {
  const store = d1Store({ binding });
  await store.migrate();
  return store;
}

export async function openDynamoDb(client: DynamoDBClient, tableName: string) {
  await createTable(client, tableName); // or deploy tableDefinition(tableName) from your IaC
  return dynamodbStore({ client, tableName }); // checks the table once, read-only
}

// Redis needs no schema, but a server that persists every write (appendonly yes, appendfsync
// always): the store refuses to take a lease on one that does not, and says what to change.
export const openRedis = (client: Redis) => redisStore({ client });
