import { type AgentStore, isAgentStoreError } from '@agentstore/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';

/*
 * Attack (issue 14) on DynamoDB, which has no server clock: a client whose whole Date is skewed
 * tries to take a live lease within the declared maxClockSkewMs (5 s here). Takers whose clocks
 * are off by more (40 s) are pinned in lease-takeover-by-observation.test.ts: acquire no longer
 * reads the wall clock at all; lease-less appends still judge expiry by it, within the skew.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let store: AgentStore;
const SKEW = 5_000;

beforeAll(async () => {
  table = await freshTable(client, 'attack-skew');
  store = dynamodbStore({ client, tableName: table.tableName, maxClockSkewMs: SKEW });
});
afterAll(async () => {
  await store?.close();
  await table?.drop();
  client.destroy();
});

async function skewed<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + offsetMs });
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'granted',
    (error: unknown) => (isAgentStoreError(error) ? error.code : error),
  );

describe('attack: skewed client clocks on DynamoDB', () => {
  it('a 20 s lease granted by a holder 2.4 s behind is not taken by a taker 2.4 s ahead (4.8 s apart, within the declared 5 s)', async () => {
    const id = sessionId();
    await skewed(-2_400, () => store.acquireLease(id, { holder: 'a', ttlMs: 20_000, init: init() }));
    // Stored expiry ≈ real grant + 17.6 s; the taker sees it expire only at real grant + 20.2 s.
    expect(
      await outcome(skewed(2_400, () => store.acquireLease(id, { holder: 'b', ttlMs: 2_000, init: init() }))),
    ).toBe('SESSION_BUSY');
    expect(
      await outcome(
        skewed(2_400, () => store.append(id, { expectedSeq: 0, messages: [message('x')], lease: null })),
      ),
    ).toBe('LEASE_LOST');
  });

  it('a renewal by a holder whose clock runs behind (within the skew) does not let a correct clock in early', async () => {
    const id = sessionId();
    const { epoch } = await store.acquireLease(id, { holder: 'a', ttlMs: 30_000, init: init() });
    await skewed(-4_900, () => store.renewLease(id, { holder: 'a', epoch, ttlMs: 20_000 }));
    // Stored expiry ≈ real + 15.1 s; a correct clock adds the declared 5 s: live until real + 20.1 s.
    expect(await outcome(store.acquireLease(id, { holder: 'b', ttlMs: 2_000, init: init() }))).toBe(
      'SESSION_BUSY',
    );
  });
});
