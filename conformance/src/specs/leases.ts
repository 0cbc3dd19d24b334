import {
  type AgentStore,
  MAX_LEASE_TTL_MS,
  MIN_LEASE_TTL_MS,
  type SessionInit,
  SessionNotFoundError,
} from '@agentstore/core';
import {
  assert,
  assertEqual,
  assertFacts,
  assertUnchanged,
  expectStoreError,
  preview,
  snapshot,
  violation,
} from '../assertions.ts';
import { type CheckContext, type ConformanceCheck, type ConformanceSpec, describeSpec } from '../check.ts';
import { freshId, messages, seedSession, sessionInit, sleep, withClockSkew } from '../fixtures.ts';
import { looseBase, looseVariants } from '../hostile-values.ts';
import type { ConformanceTarget } from '../target.ts';

/** Short TTLs and real waiting (plus the store's declared clock skew, if any). */
const SHORT_TTL_MS = 150;
const LONG_TTL_MS = 30_000;
/** Room for a slow backend round trip when comparing an expiry with the client's clock. */
const CLOCK_SLACK_MS = 1_000;

const holderId = (name: string) => `${name}-${crypto.randomUUID()}`;

/** How long past its expiry a lease stays live for takers: the store's declared clock skew (0 for server-clock stores). */
const skewOf = (store: AgentStore) => store.maxClockSkewMs ?? 0;

/** Sleeps until a lease of `ttlMs` granted now has expired for every taker. */
const outlive = (store: AgentStore, ttlMs: number) => sleep(ttlMs + skewOf(store) + 60);

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

/**
 * acquireLease by a caller whose owner or tenant differs from the session's must be
 * SessionAccessDeniedError with the not-found message. `loose` names what a store that lets
 * this caller through did wrong, when the only difference is one a loose collation ignores.
 */
async function expectAccessDenied(
  ctx: CheckContext,
  sessionId: string,
  init: SessionInit,
  loose?: string,
): Promise<void> {
  const what = `acquireLease with owner ${preview(init.ownerId)} / tenant ${preview(init.tenantId)}`;
  const cause = loose
    ? ` — ${loose}. Compare owner and tenant ids exactly, as the values they are (a binary collation; never trimmed, case-folded, accent-folded or normalized), or one user's id opens another's session`
    : '';
  let granted: unknown;
  try {
    granted = await ctx.store.acquireLease(sessionId, {
      holder: holderId('stranger'),
      ttlMs: LONG_TTL_MS,
      init,
    });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'SESSION_ACCESS_DENIED') {
      assertEqual(
        (error as { sessionId?: unknown }).sessionId,
        sessionId,
        'SessionAccessDeniedError.sessionId',
      );
      assertEqual(
        (error as Error).message,
        new SessionNotFoundError({ sessionId }).message,
        'SessionAccessDeniedError.message',
      );
      return;
    }
    const got = `${(error as Error).name} (code ${String(code)}): ${(error as Error).message}`;
    if (code === 'SESSION_BUSY' && loose) {
      violation(
        `${what}: expected SessionAccessDeniedError, got ${got}: the caller passed the owner check and was stopped only by the live lease${cause}`,
      );
    }
    violation(`${what}: expected SessionAccessDeniedError, got ${got}${cause}`);
  }
  violation(
    `${what}: expected SessionAccessDeniedError, but the lease was granted (${preview(granted)})${cause}`,
  );
}

export const leaseChecks: ConformanceCheck[] = [
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
  {
    name: 'a different owner or tenant is denied with the not-found message, and changes nothing',
    async run(ctx) {
      const { store } = ctx;
      const owner = `owner-${crypto.randomUUID()}`;
      const tenant = `tenant-${crypto.randomUUID()}`;
      const id = freshId('access');
      const init = sessionInit({ ownerId: owner, tenantId: tenant });
      const holder = holderId('a');
      const { epoch } = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init });
      await store.append(id, { expectedSeq: 0, messages: messages(1), lease: { holder, epoch } });
      const before = await snapshot(ctx, id);
      const strangers: { init: SessionInit; loose?: string }[] = [
        { init: { ...init, ownerId: `owner-${crypto.randomUUID()}` } },
        { init: { ...init, tenantId: `tenant-${crypto.randomUUID()}` } },
        { init: { ...init, ownerId: null } },
        { init: { ...init, tenantId: null } },
        {
          init: { ...init, ownerId: owner.toUpperCase() },
          loose: `owner ids were compared case-insensitively: ${preview(owner.toUpperCase())} was taken for ${preview(owner)}`,
        },
      ];
      for (const stranger of strangers) {
        await expectAccessDenied(ctx, id, stranger.init, stranger.loose);
        await assertUnchanged(ctx, id, before, 'denied acquireLease');
      }
      // A released session with no live lease is still not open to strangers.
      await store.releaseLease(id, { holder, epoch });
      const released = await snapshot(ctx, id);
      await expectStoreError(
        store.acquireLease(id, { holder: holderId('c'), ttlMs: LONG_TTL_MS, init: strangers[0]!.init }),
        'SESSION_ACCESS_DENIED',
        'acquireLease by another owner of a session whose lease is free',
      );
      await assertUnchanged(ctx, id, released, 'denied acquireLease of a free session');
    },
  },
  {
    name: 'owner and tenant are compared exactly: a trailing space, another case, an accent or another Unicode normalization is another owner',
    async run(ctx) {
      const { store } = ctx;
      const owner = looseBase('owner');
      const tenant = looseBase('tenant');
      const id = freshId('loose-owner');
      const init = sessionInit({ ownerId: owner, tenantId: tenant });
      await seedSession(store, id, 1, init);
      // No live lease: a store that lets a variant through grants it, rather than saying busy.
      const before = await snapshot(ctx, id);
      for (const [field, base] of [
        ['ownerId', owner],
        ['tenantId', tenant],
      ] as const) {
        for (const variant of looseVariants(base)) {
          const loose = `${field === 'ownerId' ? 'owner' : 'tenant'} ids were compared loosely, ${variant.how}: ${preview(variant.value)} was taken for ${preview(base)}`;
          await expectAccessDenied(ctx, id, { ...init, [field]: variant.value }, loose);
          await assertUnchanged(ctx, id, before, `acquireLease with ${field} ${preview(variant.value)}`);
        }
      }
      // The exact owner and tenant still lease it.
      await store.acquireLease(id, { holder: holderId('owner'), ttlMs: LONG_TTL_MS, init });
    },
  },
  {
    name: 'a session created without owner is not taken over by an owner, and the owner is never overwritten',
    async run(ctx) {
      const { store, capabilities } = ctx;
      const id = freshId('null-owner');
      await seedSession(store, id, 1, sessionInit({ ownerId: null, tenantId: null }));
      await expectStoreError(
        store.acquireLease(id, {
          holder: holderId('a'),
          ttlMs: LONG_TTL_MS,
          init: sessionInit({ ownerId: 'claimer' }),
        }),
        'SESSION_ACCESS_DENIED',
        'acquireLease with an owner on a session that has none',
      );
      await store.append(id, {
        expectedSeq: 1,
        messages: messages(1),
        session: { init: sessionInit({ ownerId: 'claimer', tenantId: 'claimer-tenant' }) },
        lease: null,
      });
      const loaded = await store.load(id);
      assertEqual(
        [loaded?.session.ownerId, loaded?.session.tenantId],
        [null, null],
        'owner and tenant after an append with another init',
      );
      if (capabilities.raw) {
        const row = await capabilities.raw.session(id);
        assertEqual([row?.ownerId, row?.tenantId], [null, null], 'raw owner and tenant');
      }
      const { epoch } = await store.acquireLease(id, {
        holder: holderId('b'),
        ttlMs: LONG_TTL_MS,
        init: sessionInit(),
      });
      assert(epoch >= 1, 'the null owner could not lease its own session');
    },
  },
  {
    name: 'lease calls reject a ttlMs outside 10 ms … 24 h (or not an integer) with InvalidArgumentError, before any write',
    async run({ store }) {
      const id = freshId('ttl');
      const outside = [
        0,
        -1,
        1.5,
        MIN_LEASE_TTL_MS - 1,
        MAX_LEASE_TTL_MS + 1,
        // Past year 9999: an ISO expiry would read +011533-…, sorting before any real date.
        3e14,
        Number.MAX_SAFE_INTEGER,
        Number.NaN,
        Number.POSITIVE_INFINITY,
      ];
      for (const ttlMs of outside) {
        await expectStoreError(
          store.acquireLease(id, { holder: holderId('a'), ttlMs, init: sessionInit() }),
          'INVALID_ARGUMENT',
          `acquireLease with ttlMs ${ttlMs}`,
        );
      }
      assertEqual(await store.load(id), null, 'session after rejected acquireLease calls');
      const holder = holderId('a');
      const { epoch } = await store.acquireLease(id, {
        holder,
        ttlMs: MAX_LEASE_TTL_MS,
        init: sessionInit(),
      });
      const held = (await store.load(id))?.session.lease;
      for (const ttlMs of outside) {
        await expectStoreError(
          store.renewLease(id, { holder, epoch, ttlMs }),
          'INVALID_ARGUMENT',
          `renewLease with ttlMs ${ttlMs}`,
        );
      }
      assertEqual((await store.load(id))?.session.lease, held, 'lease after rejected renewLease calls');
      // The longest TTL is stored so that it still compares as live.
      await expectStoreError(
        store.acquireLease(id, { holder: holderId('b'), ttlMs: LONG_TTL_MS, init: sessionInit() }),
        'SESSION_BUSY',
        'acquireLease by another holder while a 24 h lease is live',
      );
      await store.listSessions({ limit: 10 });
    },
  },
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

export const leaseSpec: ConformanceSpec = { title: 'leases and fencing', checks: leaseChecks };

/** Leases and fencing: grant, busy, renew, release, expiry, epochs, access control, TTL bounds, skewed clocks. */
export function describeLeases(target: ConformanceTarget): void {
  describeSpec(target, leaseSpec);
}
