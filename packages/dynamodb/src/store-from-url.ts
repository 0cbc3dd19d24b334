import { type AgentStore, InvalidArgumentError } from '@agentstore/core';
import { dynamodbStore } from './dynamodb-store.ts';

/**
 * The store a URL names, for tools such as `agentstore inspect`:
 * `dynamodb://TABLE?region=eu-west-1&endpoint=http://127.0.0.1:8000` (region and endpoint
 * optional: the SDK's defaults and credential chain apply). The store owns its client.
 */
export function storeFromUrl(url: string): AgentStore {
  const parsed = new URL(url);
  if (parsed.protocol !== 'dynamodb:' || !parsed.hostname) {
    throw new InvalidArgumentError({
      argument: 'url',
      reason: 'must be dynamodb://TABLE[?region=…&endpoint=…]',
    });
  }
  // URL hosts are lower-cased; a table name keeps its case when given in the path instead.
  const tableName = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || parsed.hostname;
  const region = parsed.searchParams.get('region');
  const endpoint = parsed.searchParams.get('endpoint');
  return dynamodbStore({
    tableName,
    clientConfig: { ...(region !== null ? { region } : {}), ...(endpoint !== null ? { endpoint } : {}) },
  });
}
