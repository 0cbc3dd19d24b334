import type { AgentStore, ListSessionsInput, SessionRecord } from '@agentstore/core';
import { compareSessionIds } from '@agentstore/core/store';
import { assert, assertEqual, assertMessages, preview, snapshot, violation } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { asRecords, freshId, message, messages, plainId, seedSession, sessionInit } from '../fixtures.ts';
import { EXACT_COMPARE, looseBase, looseVariants } from '../hostile-values.ts';

/** Every page of a listing, following `nextCursor`, with the page sizes seen. */
async function listAll(store: AgentStore, input: Omit<ListSessionsInput, 'cursor'>) {
  const sessions: SessionRecord[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const result = await store.listSessions({ ...input, cursor });
    pages.push(result.sessions.length);
    sessions.push(...result.sessions);
    if (result.nextCursor === null) return { sessions, pages };
    assertEqual(result.nextCursor, result.sessions.at(-1)?.id, 'nextCursor (the last id of the page)');
    cursor = result.nextCursor;
  }
  throw new Error('listSessions did not finish within 100 pages');
}

const sortedIds = (ids: string[]) => [...ids].sort(compareSessionIds);

const isolationChecks: ConformanceCheck[] = [
  {
    name: 'sessions never see each other’s messages, even with the same message ids',
    async run({ store }) {
      const a = freshId('iso-a');
      const b = freshId('iso-b');
      const shared = message({ content: 'same id in both sessions' });
      const inA = [shared, ...messages(2, { content: 'only in A' })];
      const inB = [
        { ...shared, content: 'same id, other session' },
        ...messages(3, { content: 'only in B' }),
      ];
      // Interleaved, so a store keyed by message id or by global order shows it.
      await store.append(a, {
        expectedSeq: 0,
        messages: inA.slice(0, 1),
        session: { init: sessionInit() },
        lease: null,
      });
      await store.append(b, {
        expectedSeq: 0,
        messages: inB.slice(0, 2),
        session: { init: sessionInit() },
        lease: null,
      });
      await store.append(a, { expectedSeq: 1, messages: inA.slice(1), lease: null });
      await store.append(b, { expectedSeq: 2, messages: inB.slice(2), lease: null });
      assertMessages((await store.load(a))?.messages ?? [], asRecords(inA, 1), 'session A');
      assertMessages((await store.load(b))?.messages ?? [], asRecords(inB, 1), 'session B');
      assertMessages(
        (await store.load(a, { afterSeq: 2 }))?.messages ?? [],
        asRecords(inA.slice(2), 3),
        'session A after seq 2',
      );
      assertEqual((await store.load(a))?.session.headSeq, 3, 'session A headSeq');
    },
  },
  {
    name: 'listSessions filters by tenant, owner and agentName, ordered by id',
    async run({ store }) {
      const tenant = `tenant-${plainId()}`;
      const otherTenant = `tenant-${plainId()}`;
      const o1 = `owner-${plainId()}`;
      const o2 = `owner-${plainId()}`;
      const made: { id: string; ownerId: string; tenantId: string; agentName: string }[] = [];
      const layout: [string, string, string][] = [
        [o1, 'alpha', tenant],
        [o1, 'alpha', tenant],
        [o1, 'alpha', tenant],
        [o2, 'alpha', tenant],
        [o2, 'alpha', tenant],
        [o1, 'beta', tenant],
        [o1, 'alpha', otherTenant],
      ];
      for (const [ownerId, agentName, tenantId] of layout) {
        const id = `ls${plainId()}`;
        await seedSession(store, id, 1, sessionInit({ ownerId, tenantId, agentName }));
        made.push({ id, ownerId, tenantId, agentName });
      }
      const expect = async (filter: Omit<ListSessionsInput, 'limit' | 'cursor'>, what: string) => {
        const wanted = made.filter(
          (s) =>
            (filter.tenantId === undefined || s.tenantId === filter.tenantId) &&
            (filter.ownerId === undefined || s.ownerId === filter.ownerId) &&
            (filter.agentName === undefined || s.agentName === filter.agentName),
        );
        const { sessions } = await listAll(store, { ...filter, limit: 100 });
        assertEqual(
          sessions.map((s) => s.id),
          sortedIds(wanted.map((s) => s.id)),
          `listSessions ${what}`,
        );
        for (const s of sessions) {
          const source = made.find((m) => m.id === s.id)!;
          assertEqual(
            [s.ownerId, s.tenantId, s.agentName, s.headSeq],
            [source.ownerId, source.tenantId, source.agentName, 1],
            `listed session ${s.id} (ownerId, tenantId, agentName, headSeq)`,
          );
        }
      };
      await expect({ tenantId: tenant }, 'by tenant');
      await expect({ tenantId: tenant, ownerId: o1 }, 'by tenant and owner');
      await expect({ tenantId: tenant, agentName: 'beta' }, 'by tenant and agentName');
      await expect({ tenantId: tenant, ownerId: o2, agentName: 'alpha' }, 'by tenant, owner and agentName');
      await expect({ ownerId: o1 }, 'by owner across tenants');
      await expect({ tenantId: otherTenant }, 'by the other tenant');
      await expect({ tenantId: `tenant-${plainId()}` }, 'by a tenant with no sessions');
    },
  },
  {
    name: 'listSessions filters compare exactly: an owner, tenant or agent name with a trailing space, another case, an accent or another normalization finds nothing of the original’s',
    async run({ store }) {
      const fields = {
        ownerId: looseBase('owner'),
        tenantId: looseBase('tenant'),
        agentName: looseBase('agent'),
      } as const;
      const id = `loose${plainId()}`;
      await seedSession(store, id, 1, sessionInit(fields));
      for (const [field, base] of Object.entries(fields) as [keyof typeof fields, string][]) {
        const exact = await listAll(store, { [field]: base, limit: 100 });
        assertEqual(
          exact.sessions.map((s) => s.id),
          [id],
          `listSessions({ ${field}: ${preview(base)} }) (the exact value)`,
        );
        for (const variant of looseVariants(base)) {
          const { sessions } = await listAll(store, { [field]: variant.value, limit: 100 });
          if (sessions.some((s) => s.id === id)) {
            violation(
              `listSessions({ ${field}: ${preview(variant.value)} }) returned session ${id}, whose ${field} is ${preview(base)}: the filter compared ids loosely, ${variant.how} — so a caller listing its own sessions sees another owner's or tenant's. Filters must ${EXACT_COMPARE}`,
            );
          }
        }
      }
    },
  },
  {
    name: 'listSessions orders ids by code point (U+E000 before U+1F600), on one page and across pages',
    async run({ store }) {
      const tenantId = `tenant-${plainId()}`;
      const base = `cp${plainId()}`;
      // JavaScript's < puts '\u{1F600}' (a surrogate pair, 0xD83D…) before '\uE000'; code point
      // order, the byte order of UTF-8, puts it after.
      const ids = [`${base}\uE000`, `${base}\u{1F600}`, `${base}a`];
      for (const id of ids) await seedSession(store, id, 1, sessionInit({ tenantId }));
      const wanted = [`${base}a`, `${base}\uE000`, `${base}\u{1F600}`];
      for (const limit of [100, 1]) {
        const listed = (await listAll(store, { tenantId, limit })).sessions.map((s) => s.id);
        if (listed.length === wanted.length && listed.every((id, i) => id === wanted[i])) continue;
        violation(
          `listSessions (limit ${limit}) listed ${preview(listed.map((id) => id.slice(base.length)))} after a common prefix; the contract orders ids by Unicode code point, ${preview(wanted.map((id) => id.slice(base.length)))}: sort with compareSessionIds from @agentstore/core/store (never JavaScript's <, which orders UTF-16 code units) or a binary collation of UTF-8 (COLLATE "C", SQLite BINARY), and compare the cursor the same way`,
        );
      }
    },
  },
  {
    name: 'listSessions pages with a cursor: every session once, nextCursor null on the last page',
    async run({ store }) {
      for (const count of [7, 6]) {
        const tenantId = `tenant-${plainId()}`;
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const id = `pg${plainId()}`;
          await seedSession(store, id, 1, sessionInit({ tenantId }));
          ids.push(id);
        }
        const { sessions, pages } = await listAll(store, { tenantId, limit: 3 });
        assertEqual(
          sessions.map((s) => s.id),
          sortedIds(ids),
          `${count} sessions read 3 per page`,
        );
        assertEqual(pages, count === 7 ? [3, 3, 1] : [3, 3], `page sizes for ${count} sessions, limit 3`);
      }
    },
  },
  {
    name: 'deleteSession removes that session and all its messages, and nothing else',
    async run(ctx) {
      const { store, capabilities } = ctx;
      const tenantId = `tenant-${plainId()}`;
      const doomed = `del${plainId()}`;
      const kept = `del${plainId()}`;
      await seedSession(store, doomed, 4, sessionInit({ tenantId }));
      await seedSession(store, kept, 3, sessionInit({ tenantId }));
      await store.acquireLease(doomed, { holder: 'h', ttlMs: 30_000, init: sessionInit({ tenantId }) });
      const keptBefore = await snapshot(ctx, kept);
      assertEqual(
        await store.deleteSession(doomed),
        { deleted: true },
        'deleteSession of an existing session',
      );
      assertEqual(await store.load(doomed), null, 'load after deleteSession');
      if (capabilities.raw) {
        assertEqual(await capabilities.raw.session(doomed), null, 'raw session row after deleteSession');
        assertEqual(await capabilities.raw.messages(doomed), [], 'raw message rows after deleteSession');
      }
      const keptAfter = await snapshot(ctx, kept);
      assertEqual(keptAfter, keptBefore, 'the other session after deleteSession');
      assertEqual(
        (await listAll(store, { tenantId, limit: 10 })).sessions.map((s) => s.id),
        [kept],
        'listSessions after deleteSession',
      );
      assertEqual(await store.deleteSession(doomed), { deleted: false }, 'second deleteSession');
      assertEqual(
        await store.deleteSession(freshId('never')),
        { deleted: false },
        'deleteSession of an unknown session',
      );
      // The id is free again: a new session starts from seq 1.
      const fresh = messages(2);
      await store.append(doomed, {
        expectedSeq: 0,
        messages: fresh,
        session: { init: sessionInit() },
        lease: null,
      });
      const reborn = await store.load(doomed);
      assert(reborn, 'load of a re-created session returned null');
      assertMessages(reborn.messages, asRecords(fresh, 1), `re-created session ${preview(doomed)}`);
      assertEqual(reborn.session.lease, null, 'lease of a re-created session');
    },
  },
];

export const isolationSpec: ConformanceSpec = { title: 'isolation', checks: isolationChecks };
