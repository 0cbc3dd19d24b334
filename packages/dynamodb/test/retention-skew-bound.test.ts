import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { freshTable, init, message, testClient } from './support/dynamodb.ts';

/*
 * DynamoDB has no server clock: a session's `updatedAt` is its last writer's clock. Retention
 * therefore counts a session as idle only past the declared skew bound (`maxClockSkewMs`), as a
 * taker counts a lease as expired: a writer whose clock runs behind, within the bound, must not
 * make a session it just wrote look idle.
 */

const SKEW_MS = 5_000;
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'retention-skew');
});
afterAll(() => table?.drop());
afterEach(() => {
  vi.useRealTimers();
});

describe('retention applies the declared clock-skew bound', () => {
  it('a session just written by a writer 4 s behind survives an "idle for 1 s" sweep; past the bound it goes', async () => {
    const store = dynamodbStore({ client, tableName: table.tableName, maxClockSkewMs: SKEW_MS });
    await store.listSessions({ limit: 1 }); // the table is checked before the clock moves
    // The writer's clock: 4 s behind, within the 5 s bound (only Date is faked; timers stay real).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 4_000 });
    await store.append('behind', {
      expectedSeq: 0,
      messages: [message()],
      session: { init: init() },
      lease: null,
    });
    vi.useRealTimers();
    const sweep = (idleForMs: number) =>
      store.deleteIdleSessions({ idleBefore: new Date(Date.now() - idleForMs).toISOString(), limit: 100 });
    expect((await sweep(1_000)).deleted).toEqual([]);
    expect(await store.load('behind')).not.toBeNull();
    // Idle by every clock within the bound: a sweep that lets the bound pass deletes it.
    expect((await sweep(-SKEW_MS)).deleted).toEqual(['behind']);
  });
});
