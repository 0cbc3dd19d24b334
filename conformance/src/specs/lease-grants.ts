import {
  assert,
  assertEqual,
  assertFacts,
  assertUnchanged,
  expectStoreError,
  preview,
  snapshot,
} from '../assertions.ts';
import type { ConformanceCheck } from '../check.ts';
import { freshId, messages, seedSession, sessionInit, sleep } from '../fixtures.ts';
import { CLOCK_SLACK_MS, holderId, LONG_TTL_MS, outlive, SHORT_TTL_MS, skewOf } from './lease-timing.ts';

/** Grant, busy, renew, release and expiry: the lease's life by one holder and the next. */
export const leaseGrantChecks: ConformanceCheck[] = [
  {
    name: 'acquire creates the session from init and grants a lease expiring ttlMs from now',
    async run({ store }) {
      const id = freshId('acquire');
      const init = sessionInit({
        agentName: 'lease-agent',
        ownerId: `o-${crypto.randomUUID()}`,
        tenantId: null,
        state: { n: 1 },
      });
      const holder = holderId('a');
      const t0 = Date.now();
      const granted = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init });
      const t1 = Date.now();
      assert(
        Number.isSafeInteger(granted.epoch) && granted.epoch >= 1,
        `epoch must be an integer ≥ 1, got ${preview(granted.epoch)}`,
      );
      const { session } = granted;
      assertEqual(
        [session.id, session.agentName, session.ownerId, session.tenantId, session.state, session.headSeq],
        [id, init.agentName, init.ownerId, init.tenantId, init.state, 0],
        'session returned by the first acquireLease (id, agentName, ownerId, tenantId, state, headSeq)',
      );
      assertEqual(
        [session.lease?.holder, session.lease?.epoch],
        [holder, granted.epoch],
        'lease returned by acquireLease',
      );
      const expiresAt = Date.parse(session.lease?.expiresAt ?? '');
      assert(
        expiresAt >= t0 + LONG_TTL_MS - CLOCK_SLACK_MS && expiresAt <= t1 + LONG_TTL_MS + CLOCK_SLACK_MS,
        `lease.expiresAt ${preview(session.lease?.expiresAt)} is not ttlMs (${LONG_TTL_MS}) after the call`,
      );
      const loaded = await store.load(id);
      assert(loaded, 'load after acquireLease returned null: acquireLease must create the session');
      assertEqual(loaded.session.lease, session.lease, 'lease seen by load');
      assertEqual(loaded.messages, [], 'messages of a session created by acquireLease');
    },
  },
  {
    name: 'another holder gets SessionBusyError with 0 < retryAfterMs ≤ ttl (+ declared skew) while the lease is live',
    async run({ store }) {
      const id = freshId('busy');
      // Long enough that a slow backend cannot let it lapse between the two calls.
      const ttlMs = 2_000;
      const bound = ttlMs + skewOf(store);
      await store.acquireLease(id, { holder: holderId('a'), ttlMs, init: sessionInit() });
      const error = await expectStoreError(
        store.acquireLease(id, { holder: holderId('b'), ttlMs, init: sessionInit() }),
        'SESSION_BUSY',
        'acquireLease by another holder while the lease is live',
      );
      assertEqual(error.sessionId, id, 'SessionBusyError.sessionId');
      const retryAfter = error.retryAfterMs as number;
      assert(
        typeof retryAfter === 'number' && retryAfter > 0 && retryAfter <= bound,
        `SessionBusyError.retryAfterMs must be in (0, ${bound}], got ${preview(retryAfter)}`,
      );
    },
  },
  {
    name: 're-acquire by the same holder bumps the epoch and fences its own old epoch',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('reacquire');
      const holder = holderId('a');
      const first = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init: sessionInit() });
      const second = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init: sessionInit() });
      assert(
        second.epoch > first.epoch,
        `re-acquire kept epoch ${first.epoch} (got ${second.epoch}); it must bump it`,
      );
      const before = await snapshot(ctx, id);
      await expectStoreError(
        store.append(id, { expectedSeq: 0, messages: messages(2), lease: { holder, epoch: first.epoch } }),
        'LEASE_LOST',
        'append with the epoch the same holder held before re-acquiring',
      );
      await assertUnchanged(ctx, id, before, 'append with a superseded epoch');
      await store.append(id, {
        expectedSeq: 0,
        messages: messages(2),
        lease: { holder, epoch: second.epoch },
      });
    },
  },
  {
    name: 'epochs strictly increase across release and re-acquire, by any holder',
    async run({ store, capabilities }) {
      const id = freshId('epochs');
      const epochs: number[] = [];
      for (const name of ['a', 'b', 'a', 'c', 'b']) {
        const holder = holderId(name);
        const { epoch } = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init: sessionInit() });
        epochs.push(epoch);
        assertEqual(
          await store.releaseLease(id, { holder, epoch }),
          { released: true },
          'release by the holder',
        );
      }
      assert(
        epochs.every((epoch, i) => i === 0 || epoch > epochs[i - 1]!),
        `epochs must strictly increase across grants, got ${preview(epochs)}`,
      );
      if (capabilities.raw) {
        const row = await capabilities.raw.session(id);
        assertEqual(
          [row?.leaseHolder, row?.leaseEpoch],
          [null, epochs.at(-1)],
          'raw lease holder and epoch after the last release',
        );
      }
    },
  },
  {
    name: 'renew extends a held lease; a wrong holder or epoch gets LeaseLostError',
    async run({ store }) {
      const id = freshId('renew');
      const holder = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      const t0 = Date.now();
      const renewed = await store.renewLease(id, { holder, epoch, ttlMs: LONG_TTL_MS });
      assert(
        Date.parse(renewed.expiresAt) >= t0 + LONG_TTL_MS - CLOCK_SLACK_MS,
        `renewLease returned expiresAt ${preview(renewed.expiresAt)}, not ttlMs after the call`,
      );
      assertEqual(
        (await store.load(id))?.session.lease?.expiresAt,
        renewed.expiresAt,
        'expiresAt seen by load after renew',
      );
      await sleep(SHORT_TTL_MS + 50);
      await expectStoreError(
        store.acquireLease(id, { holder: holderId('b'), ttlMs: SHORT_TTL_MS, init: sessionInit() }),
        'SESSION_BUSY',
        'acquireLease by another holder after the original ttl, once the lease was renewed',
      );
      for (const wrong of [
        { holder, epoch: epoch + 1 },
        { holder: holderId('b'), epoch },
      ]) {
        const error = await expectStoreError(
          store.renewLease(id, { ...wrong, ttlMs: LONG_TTL_MS }),
          'LEASE_LOST',
          `renewLease with ${wrong.holder}@${wrong.epoch}`,
        );
        assertEqual(error.sessionId, id, 'LeaseLostError.sessionId');
      }
      await expectStoreError(
        store.renewLease(freshId('renew-missing'), { holder, epoch, ttlMs: LONG_TTL_MS }),
        'LEASE_LOST',
        'renewLease of a session that does not exist',
      );
    },
  },
  {
    name: 'release frees the lease only for its holder and epoch, and never throws for a stale one',
    async run({ store }) {
      const id = freshId('release');
      const a = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder: a, ttlMs: LONG_TTL_MS, init: sessionInit() });
      assertEqual(
        await store.releaseLease(id, { holder: holderId('b'), epoch }),
        { released: false },
        'release by another holder',
      );
      assertEqual(
        await store.releaseLease(id, { holder: a, epoch: epoch + 1 }),
        { released: false },
        'release with a wrong epoch',
      );
      assert(
        (await store.load(id))?.session.lease?.holder === a,
        'the lease was released by a call that did not hold it',
      );
      assertEqual(
        await store.releaseLease(id, { holder: a, epoch }),
        { released: true },
        'release by the holder',
      );
      assertEqual((await store.load(id))?.session.lease, null, 'session.lease after release');
      assertEqual(await store.releaseLease(id, { holder: a, epoch }), { released: false }, 'second release');
      assertEqual(
        await store.releaseLease(freshId('release-missing'), { holder: a, epoch: 1 }),
        { released: false },
        'release on a session that does not exist',
      );
      const next = await store.acquireLease(id, {
        holder: holderId('b'),
        ttlMs: LONG_TTL_MS,
        init: sessionInit(),
      });
      assert(next.epoch > epoch, `the grant after a release has epoch ${next.epoch}, not above ${epoch}`);
    },
  },
  {
    name: 'an expired lease is taken over, and the old holder is fenced: append, renew and release fail',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('expiry');
      const a = holderId('a');
      await seedSession(store, id, 1);
      const old = await store.acquireLease(id, { holder: a, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      await outlive(store, SHORT_TTL_MS);
      const b = holderId('b');
      const taken = await store.acquireLease(id, { holder: b, ttlMs: LONG_TTL_MS, init: sessionInit() });
      assert(taken.epoch > old.epoch, `takeover epoch ${taken.epoch} is not above the expired ${old.epoch}`);
      const before = await snapshot(ctx, id);
      const error = await expectStoreError(
        store.append(id, { expectedSeq: 1, messages: messages(3), lease: { holder: a, epoch: old.epoch } }),
        'LEASE_LOST',
        'append by the holder whose lease expired and was taken over',
      );
      assertFacts(error, { sessionId: id }, 'LeaseLostError');
      await assertUnchanged(ctx, id, before, 'append with a stale epoch');
      await expectStoreError(
        store.renewLease(id, { holder: a, epoch: old.epoch, ttlMs: LONG_TTL_MS }),
        'LEASE_LOST',
        'renew by the fenced holder',
      );
      assertEqual(
        await store.releaseLease(id, { holder: a, epoch: old.epoch }),
        { released: false },
        'release by the fenced holder',
      );
      assertEqual(
        (await store.load(id))?.session.lease?.holder,
        b,
        'lease holder after the fenced holder’s calls',
      );
      await store.append(id, {
        expectedSeq: 1,
        messages: messages(1),
        lease: { holder: b, epoch: taken.epoch },
      });
    },
  },
  {
    name: 'an expired lease nobody took over still lets its holder append (fencing is by epoch)',
    async run({ store }) {
      const id = freshId('expired-own');
      const a = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder: a, ttlMs: SHORT_TTL_MS, init: sessionInit() });
      await outlive(store, SHORT_TTL_MS);
      const result = await store.append(id, {
        expectedSeq: 0,
        messages: messages(2),
        lease: { holder: a, epoch },
      });
      assertEqual(result, { headSeq: 2 }, 'append by the holder of an expired, untaken lease');
    },
  },
  {
    name: 'append with lease: null fails while a live lease is held, and works once it is released',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('null-lease');
      await seedSession(store, id, 1);
      const a = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder: a, ttlMs: LONG_TTL_MS, init: sessionInit() });
      const before = await snapshot(ctx, id);
      await expectStoreError(
        store.append(id, { expectedSeq: 1, messages: messages(2), lease: null, releaseLease: true }),
        'LEASE_LOST',
        'lease-less append while a live lease is held',
      );
      await assertUnchanged(ctx, id, before, 'lease-less append under a live lease');
      await store.releaseLease(id, { holder: a, epoch });
      assertEqual(
        await store.append(id, { expectedSeq: 1, messages: messages(2), lease: null }),
        { headSeq: 3 },
        'lease-less append once the lease is released',
      );
    },
  },
  {
    name: 'append with releaseLease: true releases the lease in the same write',
    async run({ store, capabilities }) {
      const id = freshId('release-in-append');
      const a = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder: a, ttlMs: LONG_TTL_MS, init: sessionInit() });
      await store.append(id, {
        expectedSeq: 0,
        messages: messages(2),
        lease: { holder: a, epoch },
        releaseLease: true,
      });
      const loaded = await store.load(id);
      assertEqual(
        [loaded?.session.headSeq, loaded?.session.lease],
        [2, null],
        'headSeq and lease after append with releaseLease',
      );
      if (capabilities.raw) {
        assertEqual(
          (await capabilities.raw.session(id))?.leaseHolder,
          null,
          'raw lease holder after append with releaseLease',
        );
      }
      const next = await store.acquireLease(id, {
        holder: holderId('b'),
        ttlMs: LONG_TTL_MS,
        init: sessionInit(),
      });
      assert(
        next.epoch > epoch,
        `the grant after releasing in an append has epoch ${next.epoch}, not above ${epoch}`,
      );
    },
  },
];
