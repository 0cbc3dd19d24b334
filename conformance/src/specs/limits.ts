import { messageByteLength } from '@agentstore/core/store';
import {
  assert,
  assertEqual,
  assertFacts,
  assertMessages,
  assertUnchanged,
  expectStoreError,
  preview,
  snapshot,
  violation,
} from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { asRecords, freshId, message, messageOfBytes, messages, sessionInit } from '../fixtures.ts';
import { nothing, seeded } from './seeded.ts';

/** The smallest per-message limit the kit accepts: tool outputs of a few hundred KiB are common. */
export const MIN_MAX_MESSAGE_BYTES = 262_144;

const MIB = 1024 * 1024;
/**
 * The largest append the kit builds: over the 16 MiB a MariaDB statement takes by default
 * (max_allowed_packet), so a store that promises more than its backend's write limit is caught.
 */
export const MAX_TRIED_APPEND_BYTES = 32 * MIB;

/**
 * Message sizes that add up to exactly `total`, none over `maxMessageBytes` and none under 400
 * bytes (the smallest message `messageOfBytes` builds with room to spare).
 */
function fillBytes(total: number, maxMessageBytes: number): number[] {
  const sizes: number[] = [];
  for (let left = total; left > 0; left -= sizes.at(-1)!) sizes.push(Math.min(maxMessageBytes, left));
  const last = sizes.at(-1)!;
  if (last < 400 && sizes.length > 1) sizes.splice(-2, 2, sizes.at(-2)! - 400, last + 400);
  return sizes;
}

const describeError = (error: unknown): string =>
  error instanceof Error
    ? `${error.name} (code ${String((error as { code?: unknown }).code)}): ${preview(error.message, 300)}`
    : preview(error);

const limitChecks: ConformanceCheck[] = [
  {
    name: `declares maxMessageBytes of at least ${MIN_MAX_MESSAGE_BYTES}`,
    async run({ store }) {
      assert(
        store.limits.maxMessageBytes >= MIN_MAX_MESSAGE_BYTES,
        `limits.maxMessageBytes is ${store.limits.maxMessageBytes}; the contract needs at least ${MIN_MAX_MESSAGE_BYTES} (256 KiB)`,
      );
    },
  },
  {
    name: 'a message of exactly maxMessageBytes round-trips',
    timeoutMs: 60_000,
    async run({ store }) {
      const id = freshId('max-bytes');
      const big = messageOfBytes(store.limits.maxMessageBytes);
      assertEqual(messageByteLength(big), store.limits.maxMessageBytes, 'size of the test message');
      const appended = [
        message({ role: 'assistant', toolCalls: [{ id: 'call_big', name: 'fetch', input: {} }] }),
        big,
      ];
      await store.append(id, {
        expectedSeq: 0,
        messages: appended,
        session: { init: sessionInit() },
        lease: null,
      });
      const loaded = await store.load(id);
      assertMessages(loaded?.messages ?? [], asRecords(appended, 1), 'a message of exactly maxMessageBytes');
    },
  },
  {
    name: 'one byte over maxMessageBytes is PayloadTooLargeError and writes nothing',
    timeoutMs: 60_000,
    async run(ctx) {
      const { id, before } = await seeded(ctx, 'over-bytes');
      const limit = ctx.store.limits.maxMessageBytes;
      const over = messageOfBytes(limit + 1);
      const error = await expectStoreError(
        ctx.store.append(id, { expectedSeq: 2, messages: [over], lease: null }),
        'PAYLOAD_TOO_LARGE',
        'append of a message one byte over maxMessageBytes',
      );
      assertFacts(
        error,
        { sessionId: id, subject: 'message', messageId: over.id, size: limit + 1, limit },
        'PayloadTooLargeError',
      );
      await assertUnchanged(ctx, id, before, 'over-limit message');
    },
  },
  {
    name: 'exactly maxMessagesPerAppend messages commit in one append; one more is PayloadTooLargeError',
    timeoutMs: 60_000,
    async run(ctx) {
      const limit = ctx.store.limits.maxMessagesPerAppend;
      const id = freshId('max-count');
      const full = messages(limit);
      assertEqual(
        await ctx.store.append(id, {
          expectedSeq: 0,
          messages: full,
          session: { init: sessionInit() },
          lease: null,
        }),
        { headSeq: limit },
        `append of exactly maxMessagesPerAppend (${limit}) messages`,
      );
      const before = await snapshot(ctx, id);
      const error = await expectStoreError(
        ctx.store.append(id, { expectedSeq: limit, messages: messages(limit + 1), lease: null }),
        'PAYLOAD_TOO_LARGE',
        `append of maxMessagesPerAppend + 1 (${limit + 1}) messages`,
      );
      assertFacts(
        error,
        { sessionId: id, subject: 'append', size: limit + 1, limit },
        'PayloadTooLargeError',
      );
      await assertUnchanged(ctx, id, before, 'too many messages');
      const fresh = freshId('max-count-new');
      await expectStoreError(
        ctx.store.append(fresh, {
          expectedSeq: 0,
          messages: messages(limit + 1),
          session: { init: sessionInit() },
          lease: null,
        }),
        'PAYLOAD_TOO_LARGE',
        'first append of too many messages',
      );
      await assertUnchanged(ctx, fresh, nothing, 'first append of too many messages');
    },
  },
  {
    name: `an append as large as the limits promise commits (maxAppendBytes, or maxMessagesPerAppend × maxMessageBytes when none is declared; up to ${MAX_TRIED_APPEND_BYTES / MIB} MiB); one byte over a declared maxAppendBytes writes nothing`,
    timeoutMs: 120_000,
    async run(ctx) {
      const { maxAppendBytes, maxMessageBytes, maxMessagesPerAppend } = ctx.store.limits;
      if (maxAppendBytes !== undefined) {
        assert(
          Number.isSafeInteger(maxAppendBytes) && maxAppendBytes >= maxMessageBytes,
          `limits.maxAppendBytes is ${preview(maxAppendBytes)}; it must be an integer ≥ maxMessageBytes (${maxMessageBytes}), or a message of maxMessageBytes could never be appended`,
        );
      }
      const implied = maxMessageBytes * maxMessagesPerAppend;
      const promised = Math.min(maxAppendBytes ?? implied, implied);
      const tried = Math.min(promised, MAX_TRIED_APPEND_BYTES);
      const sizes = fillBytes(tried, maxMessageBytes);
      const what =
        maxAppendBytes !== undefined && maxAppendBytes <= implied
          ? `an append of ${tried === maxAppendBytes ? 'exactly' : 'part of'} the declared maxAppendBytes (${tried} of ${maxAppendBytes} bytes, in ${sizes.length} messages)`
          : `an append of ${tried} bytes in ${sizes.length} messages of up to maxMessageBytes (${maxMessageBytes}), which the limits promise: ${maxAppendBytes === undefined ? 'no maxAppendBytes is declared, so' : `maxAppendBytes (${maxAppendBytes}) does not bind, so`} maxMessagesPerAppend (${maxMessagesPerAppend}) messages of maxMessageBytes each (${implied} bytes) must commit in one append`;
      const exact = sizes.map((size) => messageOfBytes(size));
      const id = freshId('append-bytes');
      const result = await ctx.store
        .append(id, { expectedSeq: 0, messages: exact, session: { init: sessionInit() }, lease: null })
        .catch((error: unknown) =>
          violation(
            `${what}: it failed with ${describeError(error)} — declare as maxAppendBytes the most one atomic write of this backend takes (a statement or packet limit such as MariaDB/MySQL max_allowed_packet, a transaction size limit); run() splits its writes to fit whatever the limits declare`,
          ),
        );
      assertEqual(result, { headSeq: exact.length }, `${what}: result`);
      if (
        maxAppendBytes === undefined ||
        maxAppendBytes >= implied ||
        maxAppendBytes >= MAX_TRIED_APPEND_BYTES
      )
        return;
      // Over by one byte in total, and no message over maxMessageBytes, so only the budget can refuse it.
      const overSizes = fillBytes(maxAppendBytes + 1, maxMessageBytes);
      if (overSizes.length > maxMessagesPerAppend) return; // the count limit is reached first
      const before = await snapshot(ctx, id);
      const over = overSizes.map((size) => messageOfBytes(size));
      const error = await expectStoreError(
        ctx.store.append(id, { expectedSeq: exact.length, messages: over, lease: null }),
        'PAYLOAD_TOO_LARGE',
        `append of maxAppendBytes + 1 bytes (${overSizes.length} messages, none over maxMessageBytes)`,
      );
      assertFacts(
        error,
        { subject: 'append', unit: 'bytes', size: maxAppendBytes + 1, limit: maxAppendBytes },
        'PayloadTooLargeError',
      );
      await assertUnchanged(ctx, id, before, 'maxAppendBytes + 1 bytes');
    },
  },
];

/** Limits: the declared sizes hold exactly, and over-limit input is refused before any write. */
export const limitSpec: ConformanceSpec = { title: 'limits', checks: limitChecks };
