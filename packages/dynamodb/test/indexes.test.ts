import { QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { GSI, SHARDS, shardOf } from '../src/index-keys.ts';
import { freshTable, init, message, testClient } from './support/dynamodb.ts';

/*
 * Listing reads about one page of index entries per shard, never the whole session set, and a
 * TTL-enabled store stamps only session items. Counts come from the responses themselves
 * (ScannedCount: items the index read, before any filter).
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
const SESSIONS = 160;
const id = (i: number) => `s-${String(i).padStart(4, '0')}`;

interface Call {
  command: string;
  index?: string;
  scanned: number;
}
const calls: Call[] = [];
const send = client.send.bind(client);
client.send = (async (command: { constructor: { name: string }; input: { IndexName?: string } }) => {
  const output = (await send(command as never)) as { ScannedCount?: number };
  calls.push({
    command: command.constructor.name,
    index: command.input.IndexName,
    scanned: output.ScannedCount ?? 0,
  });
  return output;
}) as typeof client.send;

beforeAll(async () => {
  table = await freshTable(client, 'indexes');
  const store = dynamodbStore({ client, tableName: table.tableName, ttlSeconds: 3600 });
  for (let i = 0; i < SESSIONS; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        store.append(id(i + j), {
          expectedSeq: 0,
          messages: [message(), message()],
          session: {
            init: init({
              ownerId: `owner-${(i + j) % 16}`,
              tenantId: `tenant-${(i + j) % 4}`,
              agentName: `agent-${(i + j) % 2}`,
            }),
          },
          lease: null,
        }),
      ),
    );
  }
}, 120_000);
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const store = () => dynamodbStore({ client, tableName: table.tableName });
const listAll = async (filter: Record<string, string>, limit: number) => {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<ReturnType<typeof store>['listSessions']>> = await store().listSessions({
      ...filter,
      limit,
      cursor,
    });
    ids.push(...page.sessions.map((s) => s.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids;
};
const expected = (pred: (i: number) => boolean) =>
  Array.from({ length: SESSIONS }, (_, i) => i)
    .filter(pred)
    .map(id);

describe('DynamoDB session indexes', () => {
  it('session ids spread over every write shard', () => {
    expect(new Set(expected(() => true).map(shardOf)).size).toBe(SHARDS);
  });

  it('listing a value with no sessions reads no index entries: 1 Query for an owner, one per shard otherwise', async () => {
    for (const [filter, queries, index] of [
      [{ ownerId: 'nobody' }, 1, GSI.owner],
      [{ tenantId: 'nobody' }, SHARDS, GSI.tenant],
      [{ agentName: 'nobody' }, SHARDS, GSI.agent],
    ] as const) {
      calls.length = 0;
      expect(await store().listSessions({ ...filter, limit: 20 })).toEqual({
        sessions: [],
        nextCursor: null,
      });
      const queried = calls.filter((c) => c.command === QueryCommand.name);
      expect(queried).toHaveLength(queries);
      expect(queried.every((c) => c.index === index)).toBe(true);
      expect(queried.reduce((n, c) => n + c.scanned, 0)).toBe(0);
    }
  });

  it('a combined filter that matches nothing reads no index entries, though each filter alone matches 10 or more', async () => {
    // owner-3 is only in tenant-3 and agent-1; tenant-3 only has agent-1 sessions.
    for (const [filter, queries, index] of [
      [{ ownerId: 'owner-3', tenantId: 'tenant-2' }, 1, GSI.ownerTenant],
      [{ ownerId: 'owner-3', agentName: 'agent-0' }, 1, GSI.ownerAgent],
      [{ tenantId: 'tenant-3', agentName: 'agent-0' }, SHARDS, GSI.tenantAgent],
      [{ ownerId: 'owner-3', tenantId: 'tenant-3', agentName: 'agent-0' }, 1, GSI.ownerTenantAgent],
    ] as const) {
      calls.length = 0;
      expect(await store().listSessions({ ...filter, limit: 20 })).toEqual({
        sessions: [],
        nextCursor: null,
      });
      const queried = calls.filter((c) => c.command === QueryCommand.name);
      expect(queried).toHaveLength(queries);
      expect(queried.every((c) => c.index === index)).toBe(true);
      expect(queried.reduce((n, c) => n + c.scanned, 0)).toBe(0);
    }
  });

  it('a page reads at most limit + 1 index entries per shard, whatever the table holds', async () => {
    for (const filter of [
      {},
      { ownerId: 'owner-3' },
      { tenantId: 'tenant-1' },
      { agentName: 'agent-0' },
      { ownerId: 'owner-3', tenantId: 'tenant-3' },
      { ownerId: 'owner-2', agentName: 'agent-0' },
      { tenantId: 'tenant-1', agentName: 'agent-1' },
      { ownerId: 'owner-5', tenantId: 'tenant-1', agentName: 'agent-1' },
    ]) {
      calls.length = 0;
      const page = await store().listSessions({ ...filter, limit: 4 });
      expect(page.sessions).toHaveLength(4);
      const queried = calls.filter((c) => c.command === QueryCommand.name);
      expect(queried.every((c) => c.scanned <= 5)).toBe(true);
    }
  });

  it('every filter pages through exactly its sessions in id order; combined filters too', async () => {
    expect(await listAll({}, 23)).toEqual(expected(() => true));
    expect(await listAll({ ownerId: 'owner-3' }, 3)).toEqual(expected((i) => i % 16 === 3));
    expect(await listAll({ tenantId: 'tenant-2' }, 9)).toEqual(expected((i) => i % 4 === 2));
    expect(await listAll({ agentName: 'agent-1' }, 30)).toEqual(expected((i) => i % 2 === 1));
    expect(await listAll({ tenantId: 'tenant-3', agentName: 'agent-1' }, 7)).toEqual(
      expected((i) => i % 4 === 3 && i % 2 === 1),
    );
    expect(await listAll({ ownerId: 'owner-3', tenantId: 'tenant-3' }, 3)).toEqual(
      expected((i) => i % 16 === 3),
    );
    expect(await listAll({ ownerId: 'owner-4', agentName: 'agent-0' }, 4)).toEqual(
      expected((i) => i % 16 === 4),
    );
    expect(await listAll({ tenantId: 'tenant-2', agentName: 'agent-0' }, 9)).toEqual(
      expected((i) => i % 4 === 2),
    );
    expect(await listAll({ ownerId: 'owner-9', tenantId: 'tenant-1', agentName: 'agent-1' }, 2)).toEqual(
      expected((i) => i % 16 === 9),
    );
  });

  it('with ttlSeconds only session items carry ttl: expiry removes a session whole', async () => {
    const { Items = [] } = await client.send(new ScanCommand({ TableName: table.tableName }));
    const withTtl = Items.filter((item) => item.ttl !== undefined);
    expect(withTtl.length).toBe(SESSIONS);
    expect(withTtl.every((item) => item.sk?.S === 'session')).toBe(true);
  });

  it('the retention sweep reads the idle index shard by shard and deletes sessions whole', async () => {
    const sweep = store();
    const deleted: string[] = [];
    let cursor: string | null = null;
    do {
      calls.length = 0;
      const page: Awaited<ReturnType<typeof sweep.deleteIdleSessions>> = await sweep.deleteIdleSessions({
        idleBefore: new Date(Date.now() + 60_000).toISOString(),
        limit: 50,
        cursor,
      });
      expect(
        calls.filter((c) => c.index === GSI.idle).reduce((n, c) => n + c.scanned, 0),
      ).toBeLessThanOrEqual(50);
      deleted.push(...page.deleted);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(deleted.sort()).toEqual(expected(() => true));
    const { Count } = await client.send(new ScanCommand({ TableName: table.tableName, Select: 'COUNT' }));
    expect(Count).toBe(0);
  }, 120_000);
});
