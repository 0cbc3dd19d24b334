import { type AgentStore, isAgentStoreError } from '@agentstore/core';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { rawItems } from '../src/testing/capabilities.ts';
import { freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';
import { manualMonotonicClock } from './support/manual-clock.ts';
import { withWallClock } from './support/wall-clock.ts';

/*
 * DynamoDB has no server clock, so a taker may take a lease held by another only after it has
 * itself watched the same lease record (holder, epoch, version) stay unchanged for the record's
 * TTL on its own monotonic clock (the AWS DynamoDB Lock Client's rule): no clock agreement is
 * needed. The holder and the taker are separate store instances, as two processes would be; the
 * taker's monotonic clock moves only when the test says so, and the wall clocks stay real (or are
 * set 40 s ahead), so the stored expiries never run out during a test.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let holderStore: AgentStore;
let takerStore: AgentStore;
let clock: { advance(ms: number): void };
const TTL = 3_000;
const AHEAD = 40_000;

beforeAll(async () => {
  table = await freshTable(client, 'lease-watch');
  holderStore = dynamodbStore({ client, tableName: table.tableName });
  takerStore = dynamodbStore({ client, tableName: table.tableName });
});
afterAll(async () => {
  await holderStore?.close();
  await takerStore?.close();
  await table?.drop();
  client.destroy();
});
beforeEach(() => {
  clock = manualMonotonicClock();
});
afterEach(() => {
  vi.useRealTimers();
});

/** The taker's acquire: `granted` with its epoch, or the error's code and `retryAfterMs`. */
async function take(
  id: string,
  ttlMs = 60_000,
  clockOffsetMs = 0,
): Promise<{ granted?: number; busy?: number }> {
  return withWallClock(clockOffsetMs, () =>
    takerStore.acquireLease(id, { holder: 'taker', ttlMs, init: init() }).then(
      ({ epoch }) => ({ granted: epoch }),
      (error: unknown) => {
        if (!isAgentStoreError(error, 'SESSION_BUSY')) throw error;
        return { busy: error.retryAfterMs };
      },
    ),
  );
}

const holderOf = async (id: string) => (await holderStore.load(id))?.session.lease?.holder;

describe('taking a lease held by another on DynamoDB (no clock agreement)', () => {
  it('a taker whose clock runs 40 s ahead cannot take a live lease while its holder renews it', async () => {
    const id = sessionId('ahead');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    expect(await take(id, TTL, AHEAD)).toEqual({ busy: TTL });
    for (let round = 0; round < 3; round++) {
      clock.advance(TTL * 0.75);
      await holderStore.renewLease(id, { holder: 'holder', epoch, ttlMs: TTL });
      // Each renewal is a new record: the watch starts over, however long the taker has watched.
      expect(await take(id, TTL, AHEAD)).toEqual({ busy: TTL });
    }
    expect(await holderOf(id)).toBe('holder');
    await holderStore.append(id, {
      expectedSeq: 0,
      messages: [message()],
      lease: { holder: 'holder', epoch },
    });
  });

  it('takes a lease whose holder died once it has watched it unchanged for the TTL it was granted with', async () => {
    const id = sessionId('dead');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    // The holder's TTL counts, not the taker's (shorter here): retryAfterMs says what is left.
    expect(await take(id, 500)).toEqual({ busy: TTL });
    clock.advance(TTL - 1);
    expect(await take(id, 500)).toEqual({ busy: 1 });
    clock.advance(1);
    expect(await take(id, 500)).toEqual({ granted: epoch + 1 });
    expect(await holderOf(id)).toBe('taker');
    // The dead holder, should it wake, is fenced.
    await expect(
      holderStore.append(id, { expectedSeq: 0, messages: [message()], lease: { holder: 'holder', epoch } }),
    ).rejects.toMatchObject({ code: 'LEASE_LOST' });
    await expect(holderStore.renewLease(id, { holder: 'holder', epoch, ttlMs: TTL })).rejects.toMatchObject({
      code: 'LEASE_LOST',
    });
  });

  it('a renewal while the taker watches restarts the watch, also one that lands just before the take', async () => {
    const id = sessionId('renewed');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    expect(await take(id)).toEqual({ busy: TTL });
    clock.advance(TTL - 1_000);
    await holderStore.renewLease(id, { holder: 'holder', epoch, ttlMs: TTL });
    clock.advance(1_500);
    // Watched 3.5 s in all, but the record it sees now is 0 s old to it.
    expect(await take(id)).toEqual({ busy: TTL });
    clock.advance(TTL);
    // Watched long enough; the holder renews before the taker's conditional write lands.
    await holderStore.renewLease(id, { holder: 'holder', epoch, ttlMs: 2 * TTL });
    expect(await take(id)).toEqual({ busy: 2 * TTL });
    expect(await holderOf(id)).toBe('holder');
    clock.advance(2 * TTL);
    expect(await take(id)).toEqual({ granted: epoch + 1 });
  });

  it('takes a released lease at once, also one it was watching', async () => {
    const id = sessionId('released');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    expect(await take(id)).toEqual({ busy: TTL });
    expect(await holderStore.releaseLease(id, { holder: 'holder', epoch })).toEqual({ released: true });
    expect(await take(id)).toEqual({ granted: epoch + 1 });
  });

  it('keeps honouring a lease record written without a version (an earlier package version)', async () => {
    const id = sessionId('legacy');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    // What the earlier version left: holder, epoch and expiry, no record version.
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'REMOVE leaseVersion',
      }),
    );
    // No TTL is stored: judged by the rule it was written under, watched until its expiry plus
    // maxClockSkewMs (5 s by default) by the taker's clock — here about 8 s.
    const first = await take(id, 1_000);
    expect(first.busy).toBeGreaterThan(TTL + 4_000);
    expect(first.busy).toBeLessThanOrEqual(TTL + 5_000);
    // A renewal by an earlier version moves only the expiry: that restarts the watch too.
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'SET leaseExpiresAt = :expires',
        ExpressionAttributeValues: { ':expires': { S: new Date(Date.now() + TTL + 1).toISOString() } },
      }),
    );
    clock.advance(first.busy!);
    const again = await take(id, 1_000);
    expect(again.busy).toBeGreaterThan(TTL + 4_000);
    clock.advance(again.busy!);
    expect(await take(id, 1_000)).toEqual({ granted: epoch + 1 });
    // The new grant carries a version again.
    const item = (await rawItems(client, table.tableName, id)).find((i) => i.sk?.S === 'session')!;
    expect(item.leaseVersion?.S).toBeDefined();
  });

  it('takes a versionless lease a crashed worker left long ago at once, as the earlier version did', async () => {
    const id = sessionId('legacy-old');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    // A session restored from an earlier version's table: its lease ran out an hour ago.
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'SET leaseExpiresAt = :expires REMOVE leaseVersion',
        ExpressionAttributeValues: { ':expires': { S: new Date(Date.now() - 3_600_000).toISOString() } },
      }),
    );
    expect(await take(id)).toEqual({ granted: epoch + 1 });
  });

  it('watches a versionless record whose expiry is no date for the taker’s own TTL, never less', async () => {
    const id = sessionId('no-date');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    await client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: id }, sk: { S: 'session' } },
        UpdateExpression: 'SET leaseExpiresAt = :expires REMOVE leaseVersion',
        ExpressionAttributeValues: { ':expires': { S: 'not a date' } },
      }),
    );
    expect(await take(id, 2_000)).toEqual({ busy: 2_000 });
    clock.advance(1_999);
    expect(await take(id, 2_000)).toEqual({ busy: 1 });
    clock.advance(1);
    expect(await take(id, 2_000)).toEqual({ granted: epoch + 1 });
  });

  it('one waiting store takes a crashed holder’s lease after one TTL, however its acquires are spaced', async () => {
    const id = sessionId('polls');
    const { epoch } = await holderStore.acquireLease(id, { holder: 'holder', ttlMs: TTL, init: init() });
    let waited = 0;
    for (;;) {
      const answer = await take(id, TTL);
      if (answer.granted !== undefined) {
        expect(answer.granted).toBe(epoch + 1);
        break;
      }
      expect(answer.busy).toBe(TTL - waited);
      // Polls at uneven intervals add up to one watch.
      const step = Math.min(answer.busy!, 700);
      clock.advance(step);
      waited += step;
    }
    expect(waited).toBe(TTL);
  });
});
