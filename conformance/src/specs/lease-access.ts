import { type SessionInit, SessionNotFoundError } from '@agentstore/core';
import {
  assert,
  assertEqual,
  assertUnchanged,
  expectStoreError,
  preview,
  sameData,
  snapshot,
  violation,
} from '../assertions.ts';
import type { CheckContext, ConformanceCheck } from '../check.ts';
import { freshId, messages, seedSession, sessionInit } from '../fixtures.ts';
import { EXACT_COMPARE, looseBase, looseVariants } from '../hostile-values.ts';
import { holderId, LONG_TTL_MS } from './lease-timing.ts';

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
    ? ` — ${loose}. Owner and tenant ids: ${EXACT_COMPARE}; or one user's id opens another's session`
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

/** Who may lease a session: its owner and tenant, compared exactly, never overwritten. */
export const leaseAccessChecks: ConformanceCheck[] = [
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
    name: 'the lease holder is compared exactly: a holder differing by a trailing space, case, an accent or normalization can neither renew, release, append under nor re-take the lease',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('loose-holder');
      await seedSession(store, id, 1);
      const holder = looseBase('holder');
      const { epoch } = await store.acquireLease(id, { holder, ttlMs: LONG_TTL_MS, init: sessionInit() });
      const held = await snapshot(ctx, id);
      for (const variant of looseVariants(holder)) {
        const as = `${preview(variant.value)} for the holder ${preview(holder)}`;
        const loose = (call: string, did: string) =>
          violation(
            `${call} by ${as} (epoch ${epoch}) ${did} — the holder was compared loosely, ${variant.how}, so another worker whose id differs only so takes over a live lease. Lease holders: ${EXACT_COMPARE}`,
          );
        const renewed = await store.renewLease(id, { holder: variant.value, epoch, ttlMs: LONG_TTL_MS }).then(
          (result) => result,
          (error: unknown) => error,
        );
        if ((renewed as { code?: unknown } | null)?.code !== 'LEASE_LOST') {
          if (renewed instanceof Error) {
            violation(
              `renewLease by ${as}: expected LeaseLostError, got ${renewed.name}: ${renewed.message}`,
            );
          }
          loose('renewLease', `renewed the lease (${preview(renewed)})`);
        }
        const released = await store.releaseLease(id, { holder: variant.value, epoch });
        if (released.released !== false) loose('releaseLease', `released the lease (${preview(released)})`);
        const appended = await store
          .append(id, { expectedSeq: 1, messages: messages(1), lease: { holder: variant.value, epoch } })
          .then(
            (result) => result,
            (error: unknown) => error,
          );
        if ((appended as { code?: unknown } | null)?.code !== 'LEASE_LOST') {
          if (appended instanceof Error) {
            violation(`append by ${as}: expected LeaseLostError, got ${appended.name}: ${appended.message}`);
          }
          loose('append', `was accepted (${preview(appended)})`);
        }
        const taken = await store
          .acquireLease(id, { holder: variant.value, ttlMs: LONG_TTL_MS, init: sessionInit() })
          .then(
            (result) => result,
            (error: unknown) => error,
          );
        if ((taken as { code?: unknown } | null)?.code !== 'SESSION_BUSY') {
          if (taken instanceof Error) {
            violation(
              `acquireLease by ${as}: expected SessionBusyError, got ${taken.name}: ${taken.message}`,
            );
          }
          loose('acquireLease', `was granted the live lease as its holder (${preview(taken)})`);
        }
        // Nothing moved: not the expiry (a loose renew that reports LeaseLostError anyway), not the holder.
        const lease = (await snapshot(ctx, id)).loaded?.session.lease;
        if (!sameData(lease, held.loaded?.session.lease)) {
          loose(
            'a lease call',
            `moved the lease from ${preview(held.loaded?.session.lease)} to ${preview(lease)}`,
          );
        }
        await assertUnchanged(ctx, id, held, `calls by ${as}`);
      }
      assertEqual(
        await store.releaseLease(id, { holder, epoch }),
        { released: true },
        'release by the holder',
      );
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
];
