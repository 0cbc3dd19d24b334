import type { LoadResult } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import { expect, it } from 'vitest';
import { openSpecContext, runCheck } from '../src/check.ts';
import { applicableChecks, conformanceSpecs } from '../src/index.ts';

// A database the kit shares with data that is not its own: sessions idle for as long as the
// kit runs, one with an owner and tenant, one whose lease was released.
const store = durableMemoryStore();
const target = { name: 'shared store', createStore: () => store, destroyStore: () => {} };

async function seedForeign(): Promise<Map<string, LoadResult>> {
  const foreign = new Map<string, LoadResult>();
  for (const [i, init] of [
    { agentName: 'billing', ownerId: null, tenantId: null, state: null },
    { agentName: 'billing', ownerId: 'customer-7', tenantId: 'acme', state: { plan: 'pro' } },
    { agentName: 'support', ownerId: null, tenantId: null, state: [1, 2] },
  ].entries()) {
    const id = `production-session-${i}`;
    await store.append(id, {
      expectedSeq: 0,
      messages: [{ id: `m-${i}`, role: 'user', content: 'keep me', createdAt: new Date().toISOString() }],
      session: { init },
      lease: null,
    });
  }
  const leased = 'production-session-released';
  const { epoch } = await store.acquireLease(leased, {
    holder: 'worker-1',
    ttlMs: 30_000,
    init: { agentName: 'billing', ownerId: null, tenantId: null, state: null },
  });
  await store.releaseLease(leased, { holder: 'worker-1', epoch });
  for (const { id } of (await store.listSessions({ limit: 100 })).sessions) {
    foreign.set(id, (await store.load(id))!);
  }
  return foreign;
}

it('a store pre-filled with sessions the kit did not write keeps every one after a full kit run', {
  timeout: 600_000,
}, async () => {
  const foreign = await seedForeign();
  expect(foreign.size).toBe(4);
  const failures: { spec: string; check: string; message: string }[] = [];
  for (const spec of conformanceSpecs) {
    const { ctx, cleanup } = await openSpecContext(target);
    try {
      for (const check of applicableChecks(target, spec.checks)) {
        await runCheck(check, ctx).catch((error: unknown) => {
          failures.push({ spec: spec.title, check: check.name, message: (error as Error).message });
        });
      }
    } finally {
      await cleanup();
    }
  }
  // Every foreign session is still there, exactly as it was.
  for (const [id, before] of foreign) expect(await store.load(id), id).toEqual(before);
  expect((await store.listSessions({ limit: 100 })).sessions.map((s) => s.id).sort()).toEqual(
    [...foreign.keys()].sort(),
  );
  // Only the sweeping retention checks fail, saying why they refused and that nothing was deleted.
  expect(failures.map((f) => f.spec)).toEqual(['retention', 'retention', 'retention']);
  for (const failure of failures) {
    expect(failure.message).toMatch(
      /retention: refused to sweep, and deleted nothing — deleteIdleSessions deletes every idle session of the store, and this store holds sessions the kit did not write .*"production-session-/,
    );
  }
});
