import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '@agentstore/core';
import { assertEqual, expectStoreError } from '../assertions.ts';
import type { ConformanceCheck } from '../check.ts';
import { freshId, sessionInit } from '../fixtures.ts';
import { holderId, LONG_TTL_MS } from './lease-timing.ts';

/** TTL bounds: timer-safe, and stored so that the longest still compares as live. */
export const leaseTtlChecks: ConformanceCheck[] = [
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
];
