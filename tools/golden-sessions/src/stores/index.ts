import type { StoreName } from '../corpus-files.ts';
import type { CorpusBackend } from './backend.ts';
import { d1Backend } from './d1.ts';
import { dynamodbBackend } from './dynamodb.ts';
import { postgresBackend } from './postgres.ts';
import { redisBackend } from './redis.ts';
import { sqliteBackend } from './sqlite.ts';

/** Each store's backend, started on a throwaway real server by `@agentstore/servers`. */
export const BACKENDS: Record<StoreName, () => Promise<CorpusBackend>> = {
  sqlite: sqliteBackend,
  postgres: postgresBackend,
  redis: redisBackend,
  dynamodb: dynamodbBackend,
  d1: d1Backend,
};
