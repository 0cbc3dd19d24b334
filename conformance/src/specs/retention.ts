import type { AgentStore, DeleteIdleSessionsResult } from '@agentstore/core';
import {
  assert,
  assertContiguous,
  assertEqual,
  expectStoreError,
  preview,
  violation,
} from '../assertions.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, message, seedSession, sleep, withClockSkew } from '../fixtures.ts';

/** Waits until the clock has moved past `iso` (a few ms at most): timestamps before and after differ. */
async function clockPast(iso: string): Promise<void> {
  while (new Date().toISOString() <= iso) await sleep(1);
}

/** Slack for a store whose clock stamps `updatedAt` a little behind this process's. */
const CLOCK_SLACK_MS = 5_000;

/**
 * `deleteIdleSessions` has no filter: a sweep deletes every idle session of the store. So before
 * each sweep the kit lists the store and refuses to sweep (deleting nothing) when a session it
 * did not write could be swept — the kit never deletes data that is not its own.
 */
async function assertOnlyOwnIdle(ctx: CheckContext, idleBefore: string, mine: readonly string[]) {
  const own = (id: string) => mine.includes(id) || ctx.ownSessions?.has(id) === true;
  const cutoff = Date.parse(idleBefore) + CLOCK_SLACK_MS;
  const foreign: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await ctx.store.listSessions({ limit: 200, cursor });
    for (const session of page.sessions) {
      if (Date.parse(session.updatedAt) < cutoff && !own(session.id)) foreign.push(session.id);
    }
    cursor = foreign.length > 0 ? null : page.nextCursor;
  } while (cursor !== null);
  if (foreign.length === 0) return;
  throw new Error(
    `retention: refused to sweep, and deleted nothing — deleteIdleSessions deletes every idle session of the store, and this store holds sessions the kit did not write that a sweep would delete (${preview(foreign.slice(0, 3))}${foreign.length > 3 ? ', …' : ''}). Run the kit on a database, schema or key prefix of its own (the other specs delete only what they wrote)`,
  );
}

/**
 * Waits until a session last written at `iso` is idle by the store's rule: the clock past it, plus
 * the store's declared `maxClockSkewMs` (a store without a server clock, whose `updatedAt` is the
 * writer's clock, counts a session idle only past that bound).
 */
async function idlePast(store: AgentStore, iso: string): Promise<void> {
  await clockPast(new Date(Date.parse(iso) + (store.maxClockSkewMs ?? 0)).toISOString());
}

/** Runs one sweep to its end in batches of `limit`, checking the batch bound on every call. */
async function sweep(store: AgentStore, idleBefore: string, limit: number): Promise<string[]> {
  const deleted: string[] = [];
  let cursor: string | null = null;
  for (let calls = 0; ; calls++) {
    assert(calls < 100_000, 'deleteIdleSessions: the sweep never returned nextCursor null');
    const page: DeleteIdleSessionsResult = await store.deleteIdleSessions({ idleBefore, limit, cursor });
    assert(Array.isArray(page.deleted), 'deleteIdleSessions: `deleted` must be an array of ids');
    assert(
      page.deleted.length <= limit,
      `deleteIdleSessions({ limit: ${limit} }) deleted ${page.deleted.length} sessions in one call`,
    );
    deleted.push(...page.deleted);
    if (page.nextCursor === null) return deleted;
    assert(typeof page.nextCursor === 'string', 'deleteIdleSessions: nextCursor must be a string or null');
    cursor = page.nextCursor;
  }
}

/** Gone whole: not loadable, and nothing of it left in the backend. */
async function assertGone(ctx: CheckContext, sessionId: string, what: string): Promise<void> {
  const loaded = await ctx.store
    .load(sessionId)
    .catch((error: unknown) =>
      violation(`${what}: load after deletion must return null, it threw ${preview(error)}`),
    );
  assertEqual(loaded, null, `${what}: load after deletion`);
  if (ctx.capabilities.raw) {
    assertEqual(await ctx.capabilities.raw.session(sessionId), null, `${what}: raw session row`);
    assertEqual((await ctx.capabilities.raw.messages(sessionId)).length, 0, `${what}: raw message rows`);
  }
}

async function assertKept(ctx: CheckContext, sessionId: string, headSeq: number, what: string) {
  const loaded = await assertContiguous(ctx, sessionId, what);
  assertEqual(loaded.session.headSeq, headSeq, `${what}: headSeq`);
}

const retentionChecks: ConformanceCheck[] = [
  {
    name: 'deleteIdleSessions removes idle sessions whole, in bounded batches, and keeps fresh and leased ones',
    timeoutMs: 60_000,
    async run(ctx) {
      const { store } = ctx;
      const idle = [freshId('idle'), freshId('idle'), freshId('idle')];
      for (const id of idle) await seedSession(store, id, 3);
      const leased = freshId('idle-leased');
      await seedSession(store, leased, 2);
      await store.acquireLease(leased, { holder: 'retention-holder', ttlMs: 600_000, init: initOf() });
      const released = freshId('idle-released');
      await seedSession(store, released, 2);
      const grant = await store.acquireLease(released, { holder: 'gone', ttlMs: 600_000, init: initOf() });
      await store.releaseLease(released, { holder: 'gone', epoch: grant.epoch });
      const expired = freshId('idle-expired');
      await seedSession(store, expired, 2);
      await store.acquireLease(expired, { holder: 'crashed', ttlMs: 20, init: initOf() });
      const touched = freshId('touched');
      await seedSession(store, touched, 2);

      const last = (await store.load(touched))!.session.updatedAt;
      await idlePast(store, last);
      const idleBefore = new Date().toISOString();
      await clockPast(idleBefore);
      // The 20 ms lease above has expired by any clock now (past the store's declared skew, too).
      await sleep(40 + (store.maxClockSkewMs ?? 0));
      await store.append(touched, { expectedSeq: 2, messages: [message()], lease: null });
      const fresh = freshId('fresh');
      await seedSession(store, fresh, 1);

      const mine = [...idle, leased, released, expired, touched, fresh];
      await assertOnlyOwnIdle(ctx, idleBefore, mine);
      const deleted = new Set(await sweep(store, idleBefore, 2));
      for (const id of [...idle, released, expired]) {
        assert(deleted.has(id), `idle session ${id} was not reported deleted by the sweep`);
        await assertGone(ctx, id, `idle session ${id}`);
      }
      for (const id of [leased, touched, fresh]) {
        assert(!deleted.has(id), `session ${id} (leased or active after idleBefore) was deleted`);
      }
      await assertKept(ctx, leased, 2, 'idle session holding a live lease');
      await assertKept(ctx, touched, 3, 'session appended to after idleBefore');
      await assertKept(ctx, fresh, 1, 'session created after idleBefore');

      // Whole removal: the id starts from nothing again, no old message survives at seq 1.
      const reborn = message();
      await store.append(idle[0]!, { expectedSeq: 0, messages: [reborn], lease: null });
      const loaded = await assertContiguous(ctx, idle[0]!, 'session re-created after retention');
      assertEqual(loaded.messages.length, 1, 'messages of a re-created session');
      assertEqual(loaded.messages[0]!.id, reborn.id, 'the only message of a re-created session');

      // A second sweep with the same cutoff finds nothing of ours left to delete.
      await assertOnlyOwnIdle(ctx, idleBefore, mine);
      const again = await sweep(store, idleBefore, 50);
      for (const id of [leased, touched, fresh, idle[0]!]) {
        assert(!again.includes(id), `a repeated sweep deleted ${id}`);
      }
    },
  },
  {
    name: 'an append racing deleteIdleSessions either lands (the session stays) or finds the session gone whole',
    timeoutMs: 60_000,
    async run(ctx) {
      const { store } = ctx;
      const ids = Array.from({ length: 8 }, () => freshId('retention-race'));
      for (const id of ids) await seedSession(store, id, 2);
      const last = (await store.load(ids[ids.length - 1]!))!.session.updatedAt;
      await idlePast(store, last);
      const idleBefore = new Date().toISOString();
      await clockPast(idleBefore);
      await assertOnlyOwnIdle(ctx, idleBefore, ids);
      const appends = ids.map((id) =>
        store.append(id, { expectedSeq: 2, messages: [message()], lease: null }).then(
          () => 'landed' as const,
          (error: unknown) => error,
        ),
      );
      const [deleted, ...outcomes] = await Promise.all([sweep(store, idleBefore, 3), ...appends]);
      for (const [i, id] of ids.entries()) {
        const outcome = outcomes[i];
        if (outcome === 'landed') {
          assert(!deleted.includes(id), `${id}: its append landed, yet the sweep reported it deleted`);
          await assertKept(ctx, id, 3, `${id} (append landed during the sweep)`);
        } else {
          const code = (outcome as { code?: unknown } | null)?.code;
          assertEqual(code, 'SEQ_CONFLICT', `${id}: error of an append that lost the race to retention`);
          assert(deleted.includes(id), `${id}: append refused, yet the sweep did not delete the session`);
          await assertGone(ctx, id, `${id} (deleted during the race)`);
        }
      }
    },
  },
  {
    name: 'deleteIdleSessions run by a client whose clock is ahead by more than the lease TTL keeps a session holding a live lease (liveness by the authority clock)',
    timeoutMs: 60_000,
    async run(ctx) {
      const { store } = ctx;
      // As in the lease checks: no declared skew, so no client clock may be trusted (a 30 s lease,
      // a clock 40 s ahead); a declared skew, so a clock off by less than it must be tolerated.
      const skew = store.maxClockSkewMs ?? 0;
      const ttlMs = skew > 0 ? Math.max(1_000, Math.floor(skew * 0.4)) : 30_000;
      const offMs = skew > 0 ? Math.floor(skew * 0.8) : 40_000;
      const leased = freshId('retention-skew-leased');
      await seedSession(store, leased, 2);
      const idle = freshId('retention-skew-idle');
      await seedSession(store, idle, 1);
      const last = (await store.load(idle))!.session.updatedAt;
      await idlePast(store, last);
      const idleBefore = new Date().toISOString();
      await clockPast(idleBefore);
      // A worker resumes the idle session: it holds a live lease and has not appended yet.
      await store.acquireLease(leased, { holder: 'retention-skew-holder', ttlMs, init: initOf() });
      await assertOnlyOwnIdle(ctx, idleBefore, [leased, idle]);
      const deleted = await withClockSkew(offMs, () => sweep(store, idleBefore, 50));
      assert(deleted.includes(idle), `the idle session ${idle} was not deleted by the skewed client's sweep`);
      if (deleted.includes(leased)) {
        violation(
          `deleteIdleSessions, called by a client whose clock runs ${offMs} ms ahead, deleted ${leased}, which holds a live ${ttlMs} ms lease — the store judges lease liveness by the caller's clock (new Date()); judge it by the authority clock its leases are granted by (the database's), as acquireLease does`,
        );
      }
      await assertKept(ctx, leased, 2, 'idle session holding a live lease, after a skewed sweep');
    },
  },
  {
    name: 'deleteIdleSessions refuses bad input with InvalidArgumentError before deleting anything',
    async run(ctx) {
      const { store } = ctx;
      const id = freshId('retention-input');
      await seedSession(store, id, 1);
      // Far in the past: a store that wrongly accepts one of these finds nothing idle to delete.
      const past = '2000-01-01T00:00:00.000Z';
      const bad: [string, unknown][] = [
        ['idleBefore not a time', { idleBefore: 'yesterday', limit: 10 }],
        ['idleBefore a number', { idleBefore: Date.now(), limit: 10 }],
        ['idleBefore missing', { limit: 10 }],
        ['idleBefore beyond year 9999', { idleBefore: '+010000-01-01T00:00:00.000Z', limit: 10 }],
        ['limit 0', { idleBefore: past, limit: 0 }],
        ['limit fractional', { idleBefore: past, limit: 1.5 }],
        ['limit huge', { idleBefore: past, limit: 1e9 }],
        ['cursor not one this store returned', { idleBefore: past, limit: 10, cursor: 'x' }],
      ];
      for (const [what, input] of bad) {
        await expectStoreError(
          () => store.deleteIdleSessions(input as never),
          'INVALID_ARGUMENT',
          `deleteIdleSessions with ${what}`,
        );
      }
      await assertKept(ctx, id, 1, 'session after refused retention calls');
    },
  },
];

function initOf() {
  return { agentName: 'conformance-agent', ownerId: null, tenantId: null, state: null };
}

export const retentionSpec: ConformanceSpec = { title: 'retention', checks: retentionChecks };
