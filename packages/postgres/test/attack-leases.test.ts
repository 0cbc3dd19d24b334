import { defineAgent, isAgentStoreError, run } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { PostgresStore } from '../src/index.ts';
import { init, message, uniqueId, usePostgres, useProxiedStore } from './harness.ts';

/*
 * Attacks on the lease of a real Postgres (issue 14): a lost acquire answer, a renewal racing the
 * release, a client with a skewed clock, the epoch across delete and re-create.
 */
const server = usePostgres('attack');

describe('attack: acquireLease whose answer is lost after commit (real connection drop)', () => {
  const via = useProxiedStore(server);

  it('run() re-acquires with the same holder, completes, and leaves the session free (not blocked for a TTL)', async () => {
    const id = uniqueId('ack');
    const acquires: number[] = [];
    const counting = {
      ...via.store,
      acquireLease: (sessionId: string, input: Parameters<PostgresStore['acquireLease']>[1]) => {
        acquires.push(acquires.length + 1);
        return via.store.acquireLease(sessionId, input);
      },
    };
    const dropped = via.proxy.loseNextAnswer();
    const result = await run(defineAgent({ name: 'agent', instructions: '' }), {
      store: counting,
      sessionId: id,
      message: 'hi',
      llm: scriptedLlm([{ text: 'ok' }]),
      // A whole TTL of blocking would exceed the test's timeout.
      leaseTtlMs: 600_000,
    });
    await dropped;
    expect(result.status).toBe('complete');
    expect(acquires.length).toBe(2);
    const loaded = await via.store.load(id);
    // The lost grant (epoch 1) and the re-grant (epoch 2); the run released the one it kept.
    expect(loaded?.session.lease).toBeNull();
    const next = await via.store.acquireLease(id, { holder: 'next', ttlMs: 1_000, init: init() });
    expect(next.epoch).toBe(3);
  });
});

describe('attack: lease races on real Postgres', () => {
  let store: PostgresStore;
  beforeAll(async () => {
    store = await server.store();
  });

  it('a renewal racing the release never resurrects the lease (50 rounds)', async () => {
    for (let round = 0; round < 50; round++) {
      const id = uniqueId('race');
      const { epoch } = await store.acquireLease(id, { holder: 'a', ttlMs: 60_000, init: init() });
      const [renewed, released] = await Promise.allSettled([
        store.renewLease(id, { holder: 'a', epoch, ttlMs: 60_000 }),
        store.releaseLease(id, { holder: 'a', epoch }),
      ]);
      expect(released.status).toBe('fulfilled');
      if (renewed.status === 'rejected') expect(isAgentStoreError(renewed.reason, 'LEASE_LOST')).toBe(true);
      expect((await store.load(id))?.session.lease).toBeNull();
      // Free at once for the next worker.
      await store.acquireLease(id, { holder: 'b', ttlMs: 1_000, init: init() });
    }
  });

  it.each([40_000, -40_000])(
    'a client whose whole Date is skewed by %i ms cannot take a live 30 s lease nor shorten it',
    async (skew) => {
      const id = uniqueId('skew');
      const { epoch } = await store.acquireLease(id, { holder: 'a', ttlMs: 30_000, init: init() });
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + skew });
      try {
        const error = await store
          .acquireLease(id, { holder: 'b', ttlMs: 30_000, init: init() })
          .catch((e: unknown) => e);
        expect(isAgentStoreError(error, 'SESSION_BUSY')).toBe(true);
        const lostAppend = await store
          .append(id, { expectedSeq: 0, messages: [message('m')], lease: null })
          .catch((e: unknown) => e);
        expect(isAgentStoreError(lostAppend, 'LEASE_LOST')).toBe(true);
        // The holder renews from the skewed clock: the stored expiry must not move with it.
        await store.renewLease(id, { holder: 'a', epoch, ttlMs: 30_000 });
      } finally {
        vi.useRealTimers();
      }
      expect((await store.load(id))?.session.lease?.holder).toBe('a');
      await expect(store.acquireLease(id, { holder: 'c', ttlMs: 1_000, init: init() })).rejects.toMatchObject(
        {
          code: 'SESSION_BUSY',
        },
      );
    },
  );

  it('expiry is judged by the server clock: a lease that expired 1 ms ago is free, one expiring in an hour is not', async () => {
    const id = uniqueId('instant');
    const { epoch } = await store.acquireLease(id, { holder: 'a', ttlMs: 60_000, init: init() });
    await server.pool.query(
      `UPDATE "${server.schema}".agentstore_sessions SET lease_expires_at =
         to_char((now() + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') WHERE id = $1`,
      [id],
    );
    await expect(store.acquireLease(id, { holder: 'b', ttlMs: 1_000, init: init() })).rejects.toMatchObject({
      code: 'SESSION_BUSY',
    });
    await server.pool.query(
      `UPDATE "${server.schema}".agentstore_sessions SET lease_expires_at =
         to_char((now() - interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') WHERE id = $1`,
      [id],
    );
    const taken = await store.acquireLease(id, { holder: 'b', ttlMs: 1_000, init: init() });
    expect(taken.epoch).toBe(epoch + 1);
  });

  it('a holder of a deleted incarnation is fenced out of the re-created session (epochs restart per incarnation, docs/durability.md)', async () => {
    const id = uniqueId('epoch');
    let stale = { holder: '', epoch: 0 };
    for (let i = 0; i < 3; i++) {
      const { epoch } = await store.acquireLease(id, { holder: `old-${i}`, ttlMs: 60_000, init: init() });
      stale = { holder: `old-${i}`, epoch };
      if (i < 2) await store.releaseLease(id, stale);
    }
    await store.deleteSession(id);
    const fresh = await store.acquireLease(id, { holder: 'new', ttlMs: 60_000, init: init() });
    expect(fresh.epoch).toBe(1);
    const refused = await store
      .append(id, { expectedSeq: 0, messages: [message('stale')], lease: stale })
      .catch((error: unknown) => error);
    expect(isAgentStoreError(refused, 'LEASE_LOST')).toBe(true);
    await expect(store.renewLease(id, { ...stale, ttlMs: 60_000 })).rejects.toMatchObject({
      code: 'LEASE_LOST',
    });
    expect((await store.load(id))!.session.lease).toMatchObject({ holder: 'new', epoch: fresh.epoch });
  });
});
