import { MIN_LEASE_TTL_MS } from '@agentstore/core';
import {
  assertEqual,
  assertUnchanged,
  expectStoreError,
  preview,
  snapshot,
  violation,
} from '../assertions.ts';
import type { CheckContext, ConformanceCheck } from '../check.ts';
import { freshId, messages, seedSession, sessionInit, withClockSkew } from '../fixtures.ts';
import { holderId, LONG_TTL_MS, outlive, SHORT_TTL_MS, skewOf } from './lease-timing.ts';

/**
 * An append at the real head by a holder whose epoch was superseded must get LeaseLostError and
 * write nothing, whether or not a live lease is stored right now.
 */
async function assertFenced(
  ctx: CheckContext,
  sessionId: string,
  stale: { holder: string; epoch: number },
  current: number,
  after: string,
): Promise<void> {
  const before = await snapshot(ctx, sessionId);
  const head = before.loaded?.session.headSeq ?? 0;
  const what = `append at the head ${head} by epoch ${stale.epoch}, fenced by epoch ${current}, after ${after}`;
  let outcome: unknown;
  try {
    outcome = await ctx.store.append(sessionId, { expectedSeq: head, messages: messages(1), lease: stale });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'LEASE_LOST') {
      violation(
        `${what}: expected LeaseLostError, got ${(error as Error).name} (code ${String(code)}): ${(error as Error).message}`,
      );
    }
    await assertUnchanged(ctx, sessionId, before, what);
    return;
  }
  violation(
    `${what}: the store accepted it (${preview(outcome)}) — it compares the lease only while a live lease is stored, so a stale writer writes again as soon as no one holds the session. A lease token must match the stored holder and epoch whenever one is given (appendLeaseMatches from @agentstore/core/store); only lease: null depends on liveness`,
  );
}

/** Fencing: a superseded epoch never writes again, and expiry is judged by the authority clock. */
export const leaseFencingChecks: ConformanceCheck[] = [
  {
    name: 'a fenced writer gets LeaseLostError, never SeqConflictError, also after its successor appended',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('fenced');
      const a = holderId('a');
      const old = await store.acquireLease(id, { holder: a, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      await store.append(id, {
        expectedSeq: 0,
        messages: messages(1),
        lease: { holder: a, epoch: old.epoch },
      });
      await outlive(store, SHORT_TTL_MS);
      const b = holderId('b');
      const taken = await store.acquireLease(id, { holder: b, ttlMs: LONG_TTL_MS, init: sessionInit() });
      await store.append(id, {
        expectedSeq: 1,
        messages: messages(2),
        lease: { holder: b, epoch: taken.epoch },
      });
      const before = await snapshot(ctx, id);
      // Its own stale head (1) and the real head (3): either way the answer is "you lost the lease".
      for (const expectedSeq of [1, 3]) {
        await expectStoreError(
          store.append(id, { expectedSeq, messages: messages(1), lease: { holder: a, epoch: old.epoch } }),
          'LEASE_LOST',
          `append by the fenced holder at expectedSeq ${expectedSeq} after the new holder appended`,
        );
      }
      await assertUnchanged(ctx, id, before, 'appends by a fenced holder');
    },
  },
  {
    name: 'a fenced epoch stays fenced once its successor released the lease, and once its successor let it lapse',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('fenced-free');
      await seedSession(store, id, 1);
      const a = holderId('a');
      const old = await store.acquireLease(id, { holder: a, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      await outlive(store, SHORT_TTL_MS);
      const b = holderId('b');
      const taken = await store.acquireLease(id, { holder: b, ttlMs: LONG_TTL_MS, init: sessionInit() });
      await store.append(id, {
        expectedSeq: 1,
        messages: messages(1),
        lease: { holder: b, epoch: taken.epoch },
      });
      await store.releaseLease(id, { holder: b, epoch: taken.epoch });
      await assertFenced(
        ctx,
        id,
        { holder: a, epoch: old.epoch },
        taken.epoch,
        'its successor released the lease',
      );
      // A third holder takes the free session and crashes: its lease lapses with nobody after it.
      const c = holderId('c');
      const lapsed = await store.acquireLease(id, { holder: c, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      await outlive(store, SHORT_TTL_MS);
      for (const stale of [
        { holder: a, epoch: old.epoch },
        { holder: b, epoch: taken.epoch },
      ]) {
        await assertFenced(ctx, id, stale, lapsed.epoch, 'its successor’s lease lapsed, untaken');
      }
      // The lapsed holder itself may still write: nobody took over (fencing is by epoch).
      const head = (await store.load(id))?.session.headSeq ?? 0;
      await store.append(id, {
        expectedSeq: head,
        messages: messages(1),
        lease: { holder: c, epoch: lapsed.epoch },
      });
    },
  },
  {
    name: 'a client whose clock is wrong can neither take a live lease nor cut one short (expiry is judged by the authority clock)',
    async run({ store }) {
      const skew = skewOf(store);
      // No declared skew: the store must not trust client clocks at all, so a clock 40 s ahead
      // cannot take a healthy 30 s lease. A declared skew: a clock off by less than it must fail too.
      const ttlMs = skew > 0 ? Math.max(MIN_LEASE_TTL_MS, Math.floor(skew * 0.4)) : 30_000;
      const offMs = skew > 0 ? Math.floor(skew * 0.8) : 40_000;
      const ahead = freshId('clock-ahead');
      const a = holderId('a');
      await store.acquireLease(ahead, { holder: a, ttlMs, init: sessionInit() });
      await expectStoreError(
        withClockSkew(offMs, () =>
          store.acquireLease(ahead, { holder: holderId('b'), ttlMs, init: sessionInit() }),
        ),
        'SESSION_BUSY',
        `acquireLease of a live ${ttlMs} ms lease by a client whose clock runs ${offMs} ms ahead`,
      );
      await expectStoreError(
        withClockSkew(offMs, () =>
          store.append(ahead, { expectedSeq: 0, messages: messages(1), lease: null }),
        ),
        'LEASE_LOST',
        `lease-less append under a live lease by a client whose clock runs ${offMs} ms ahead`,
      );
      assertEqual(
        (await store.load(ahead))?.session.lease?.holder,
        a,
        'lease holder after the skewed client tried',
      );
      // A holder whose clock runs behind grants and renews; a correct clock must still see it live.
      const behind = freshId('clock-behind');
      const c = holderId('c');
      const granted = await withClockSkew(-offMs, () =>
        store.acquireLease(behind, { holder: c, ttlMs, init: sessionInit() }),
      );
      await withClockSkew(-offMs, () => store.renewLease(behind, { holder: c, epoch: granted.epoch, ttlMs }));
      await expectStoreError(
        store.acquireLease(behind, { holder: holderId('d'), ttlMs, init: sessionInit() }),
        'SESSION_BUSY',
        `acquireLease of a lease just granted and renewed by a client whose clock runs ${offMs} ms behind`,
      );
    },
  },
];
