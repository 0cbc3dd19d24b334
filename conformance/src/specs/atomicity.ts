import {
  assertConflictHead,
  assertEqual,
  assertUnchanged,
  expectStoreError,
  snapshot,
} from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, messageOfBytes, messages, seedSession, sessionInit } from '../fixtures.ts';

const atomicityChecks: ConformanceCheck[] = [
  {
    name: 'an over-limit message as the last of five writes nothing (existing session)',
    async run(ctx) {
      const id = freshId('atomic-size');
      await seedSession(ctx.store, id, 3);
      const before = await snapshot(ctx, id);
      const batch = [...messages(4), messageOfBytes(ctx.store.limits.maxMessageBytes + 1)];
      await expectStoreError(
        ctx.store.append(id, {
          expectedSeq: 3,
          messages: batch,
          session: { state: { changed: true } },
          lease: null,
        }),
        'PAYLOAD_TOO_LARGE',
        'append whose fifth message is one byte over the limit',
      );
      await assertUnchanged(ctx, id, before, 'over-limit fifth message');
    },
  },
  {
    name: 'an over-limit message as the last of five creates no session (new session)',
    async run(ctx) {
      const id = freshId('atomic-size-new');
      const batch = [...messages(4), messageOfBytes(ctx.store.limits.maxMessageBytes + 1)];
      await expectStoreError(
        ctx.store.append(id, {
          expectedSeq: 0,
          messages: batch,
          session: { init: sessionInit() },
          lease: null,
        }),
        'PAYLOAD_TOO_LARGE',
        'first append whose fifth message is one byte over the limit',
      );
      await assertUnchanged(
        ctx,
        id,
        { loaded: null, rawSession: null, rawMessages: [] },
        'over-limit first append',
      );
    },
  },
  {
    name: 'a seq conflict writes nothing (behind, ahead, and expectedSeq 0 on an existing session)',
    async run(ctx) {
      const id = freshId('atomic-seq');
      await seedSession(ctx.store, id, 3);
      const before = await snapshot(ctx, id);
      for (const expectedSeq of [2, 4, 0]) {
        const error = await expectStoreError(
          ctx.store.append(id, {
            expectedSeq,
            messages: messages(5),
            session: { state: { changed: true }, init: sessionInit({ agentName: 'other' }) },
            lease: null,
            releaseLease: true,
          }),
          'SEQ_CONFLICT',
          `append with expectedSeq ${expectedSeq} while the head is 3`,
        );
        assertEqual(error.sessionId, id, 'SeqConflictError.sessionId');
        assertEqual(error.expectedSeq, expectedSeq, 'SeqConflictError.expectedSeq');
        assertConflictHead(error, 3, `append with expectedSeq ${expectedSeq} while the head is 3`);
        await assertUnchanged(ctx, id, before, `seq conflict at expectedSeq ${expectedSeq}`);
      }
    },
  },
  {
    name: 'an expectedSeq above 0 on a missing session is a conflict and creates nothing',
    async run(ctx) {
      const id = freshId('atomic-missing');
      const error = await expectStoreError(
        ctx.store.append(id, {
          expectedSeq: 2,
          messages: messages(2),
          session: { init: sessionInit() },
          lease: null,
        }),
        'SEQ_CONFLICT',
        'append with expectedSeq 2 to a session that does not exist',
      );
      assertEqual(error.expectedSeq, 2, 'SeqConflictError.expectedSeq');
      assertConflictHead(error, 0, 'append with expectedSeq 2 to a missing session');
      await assertUnchanged(
        ctx,
        id,
        { loaded: null, rawSession: null, rawMessages: [] },
        'conflict on a missing session',
      );
    },
  },
  {
    name: 'a lease mismatch writes nothing and releases nothing',
    async run(ctx) {
      const id = freshId('atomic-lease');
      await seedSession(ctx.store, id, 2);
      const { epoch } = await ctx.store.acquireLease(id, {
        holder: 'holder-a',
        ttlMs: 30_000,
        init: sessionInit(),
      });
      const before = await snapshot(ctx, id);
      for (const lease of [
        { holder: 'holder-a', epoch: epoch + 1 },
        { holder: 'holder-a', epoch: epoch - 1 },
        { holder: 'holder-b', epoch },
      ]) {
        await expectStoreError(
          ctx.store.append(id, {
            expectedSeq: 2,
            messages: messages(5),
            session: { state: { changed: true } },
            lease,
            releaseLease: true,
          }),
          'LEASE_LOST',
          `append with lease ${lease.holder}@${lease.epoch} while holder-a@${epoch} holds it`,
        );
        await assertUnchanged(ctx, id, before, `lease mismatch ${lease.holder}@${lease.epoch}`);
      }
    },
  },
];

export const atomicitySpec: ConformanceSpec = { title: 'atomicity', checks: atomicityChecks };
