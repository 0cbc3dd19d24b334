import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { rawItems } from '../src/testing/capabilities.ts';
import { freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';

/*
 * Issue #19: with `ttlSeconds` shorter than a lease, the session item's `ttl` must never fall
 * before the end of a live lease (plus the declared clock skew), or DynamoDB may expire the
 * session under its running holder. Redis keeps its keys at least as long as the lease, too.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'ttl-lease');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const SKEW_MS = 5_000;
const TTL_SECONDS = 60;

async function sessionItem(id: string) {
  const item = (await rawItems(client, table.tableName, id)).find((i) => i.sk?.S === 'session')!;
  return { ttlMs: Number(item.ttl?.N) * 1000, leaseEndMs: Date.parse(item.leaseExpiresAt?.S ?? '') };
}

it('acquire, append with the lease and renew keep ttl ≥ lease end + maxClockSkewMs', async () => {
  const store = dynamodbStore({
    client,
    tableName: table.tableName,
    ttlSeconds: TTL_SECONDS,
    maxClockSkewMs: SKEW_MS,
  });
  const id = sessionId('held');
  const lease = { holder: 'w', ttlMs: 600_000 };
  const { epoch } = await store.acquireLease(id, { ...lease, init: init() });
  let item = await sessionItem(id);
  expect(item.ttlMs).toBeGreaterThanOrEqual(item.leaseEndMs + SKEW_MS);

  await store.append(id, { expectedSeq: 0, messages: [message('step')], lease: { holder: 'w', epoch } });
  item = await sessionItem(id);
  expect(item.ttlMs).toBeGreaterThanOrEqual(item.leaseEndMs + SKEW_MS);

  await store.renewLease(id, { holder: 'w', epoch, ttlMs: 900_000 });
  item = await sessionItem(id);
  expect(item.ttlMs).toBeGreaterThanOrEqual(item.leaseEndMs + SKEW_MS);
  // Idle time counts from the lease's end: an append just before it still has ttlSeconds left.
  expect(item.ttlMs).toBeGreaterThanOrEqual(item.leaseEndMs + SKEW_MS + TTL_SECONDS * 1000);
});

it('an append that releases the lease, or carries none, sets ttl from now again', async () => {
  const store = dynamodbStore({ client, tableName: table.tableName, ttlSeconds: TTL_SECONDS });
  const id = sessionId('released');
  const { epoch } = await store.acquireLease(id, { holder: 'w', ttlMs: 600_000, init: init() });
  const before = Date.now();
  await store.append(id, {
    expectedSeq: 0,
    messages: [message('last')],
    lease: { holder: 'w', epoch },
    releaseLease: true,
  });
  const after = Date.now();
  const item = (await rawItems(client, table.tableName, id)).find((i) => i.sk?.S === 'session')!;
  expect(item.leaseExpiresAt).toBeUndefined();
  const ttl = Number(item.ttl?.N);
  expect(ttl).toBeGreaterThanOrEqual(Math.floor(before / 1000) + TTL_SECONDS);
  expect(ttl).toBeLessThanOrEqual(Math.ceil(after / 1000) + TTL_SECONDS);
});
