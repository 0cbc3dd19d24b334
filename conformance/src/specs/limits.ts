import { type AppendInput, defineAgent, type LlmAdapter, type NewMessage, run } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import {
  assert,
  assertEqual,
  assertFacts,
  assertMessages,
  assertUnchanged,
  ConformanceViolation,
  expectStoreError,
  preview,
  type SessionSnapshot,
  sameData,
  snapshot,
  violation,
} from '../assertions.ts';
import { type CheckContext, type ConformanceCheck, type ConformanceSpec, describeSpec } from '../check.ts';
import {
  asRecords,
  freshId,
  message,
  messageOfBytes,
  messages,
  plainId,
  seedSession,
  sessionInit,
} from '../fixtures.ts';
import { hostileAppends, LONE_SURROGATES, type ShiftingAppend, shiftingAppends } from '../hostile-values.ts';
import type { ConformanceTarget } from '../target.ts';

/** The smallest per-message limit the kit accepts: tool outputs of a few hundred KiB are common. */
export const MIN_MAX_MESSAGE_BYTES = 262_144;

const nothing: SessionSnapshot = { loaded: null, rawSession: null, rawMessages: [] };

/** Seeds a session with two messages and returns what a rejected write must leave as it is. */
async function seeded(ctx: CheckContext, label: string): Promise<{ id: string; before: SessionSnapshot }> {
  const id = freshId(label);
  await seedSession(ctx.store, id, 2);
  return { id, before: await snapshot(ctx, id) };
}

export const limitChecks: ConformanceCheck[] = [
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
    name: 'a declared maxAppendBytes holds exactly: an append of that many bytes commits, one byte more writes nothing',
    timeoutMs: 120_000,
    async run(ctx) {
      const { maxAppendBytes, maxMessageBytes, maxMessagesPerAppend } = ctx.store.limits;
      // A budget that more than maxMessagesPerAppend full messages would need never binds.
      if (maxAppendBytes === undefined || maxAppendBytes > maxMessageBytes * maxMessagesPerAppend) return;
      assert(
        Number.isSafeInteger(maxAppendBytes) && maxAppendBytes >= maxMessageBytes,
        `limits.maxAppendBytes is ${preview(maxAppendBytes)}; it must be an integer ≥ maxMessageBytes (${maxMessageBytes}), or a message of maxMessageBytes could never be appended`,
      );
      // Full-size messages, then one that takes up the rest: exactly maxAppendBytes in all.
      const sizes: number[] = [];
      let left = maxAppendBytes;
      while (left > 0) {
        const size = Math.min(maxMessageBytes, left);
        sizes.push(size);
        left -= size;
      }
      const last = sizes.at(-1)!;
      if (last < 400) sizes.splice(-2, 2, sizes.at(-2)! - 400, last + 400);
      assert(
        sizes.length <= maxMessagesPerAppend,
        'the kit cannot fill maxAppendBytes within maxMessagesPerAppend',
      );
      const exact = sizes.map((size) => messageOfBytes(size));
      const id = freshId('append-bytes');
      assertEqual(
        await ctx.store.append(id, {
          expectedSeq: 0,
          messages: exact,
          session: { init: sessionInit() },
          lease: null,
        }),
        { headSeq: exact.length },
        `append of exactly maxAppendBytes (${maxAppendBytes}) bytes in ${exact.length} messages`,
      );
      const before = await snapshot(ctx, id);
      const over = [...sizes.slice(0, -1), sizes.at(-1)! + 1].map((size) => messageOfBytes(size));
      const error = await expectStoreError(
        ctx.store.append(id, { expectedSeq: exact.length, messages: over, lease: null }),
        'PAYLOAD_TOO_LARGE',
        'append of maxAppendBytes + 1 bytes',
      );
      assertFacts(
        error,
        { subject: 'append', unit: 'bytes', size: maxAppendBytes + 1, limit: maxAppendBytes },
        'PayloadTooLargeError',
      );
      await assertUnchanged(ctx, id, before, 'maxAppendBytes + 1 bytes');
    },
  },
  {
    name: 'invalid append input (and a bad afterSeq on load) is InvalidArgumentError and writes nothing',
    async run(ctx) {
      const { id, before } = await seeded(ctx, 'invalid');
      const good = (): NewMessage => message();
      const withId = (fields: Partial<NewMessage>): NewMessage => ({ ...good(), ...fields });
      const duplicate = good();
      const cases: [string, AppendInput][] = [
        ['negative expectedSeq', { expectedSeq: -1, messages: [good()], lease: null }],
        ['fractional expectedSeq', { expectedSeq: 1.5, messages: [good()], lease: null }],
        ['no messages', { expectedSeq: 2, messages: [], lease: null }],
        [
          'a bad role',
          {
            expectedSeq: 2,
            messages: [good(), withId({ role: 'robot' as NewMessage['role'] })],
            lease: null,
          },
        ],
        ['an empty message id', { expectedSeq: 2, messages: [good(), withId({ id: '' })], lease: null }],
        ['duplicate message ids', { expectedSeq: 2, messages: [duplicate, { ...duplicate }], lease: null }],
        [
          'content that is not a string',
          { expectedSeq: 2, messages: [withId({ content: 42 as unknown as string })], lease: null },
        ],
        [
          'a message id over 256 bytes',
          { expectedSeq: 2, messages: [withId({ id: 'é'.repeat(129) })], lease: null },
        ],
        [
          'a lease with a fractional epoch',
          { expectedSeq: 2, messages: [good()], lease: { holder: 'a', epoch: 1.5 } },
        ],
      ];
      for (const [what, input] of cases) {
        const error = await expectStoreError(
          ctx.store.append(id, input),
          'INVALID_ARGUMENT',
          `append with ${what}`,
        );
        assert(
          typeof error.argument === 'string',
          `InvalidArgumentError for ${what} has no argument path: ${preview(error.argument)}`,
        );
        await assertUnchanged(ctx, id, before, `append with ${what}`);
      }
      // Rejected before the session exists: nothing may be created either.
      const fresh = freshId('invalid-new');
      await expectStoreError(
        ctx.store.append(fresh, {
          expectedSeq: 0,
          messages: [good(), withId({ role: 'robot' as NewMessage['role'] })],
          session: { init: sessionInit() },
          lease: null,
        }),
        'INVALID_ARGUMENT',
        'first append with a bad role',
      );
      await assertUnchanged(ctx, fresh, nothing, 'first append with a bad role');
      for (const afterSeq of [-1, 1.5]) {
        await expectStoreError(
          ctx.store.load(id, { afterSeq }),
          'INVALID_ARGUMENT',
          `load with afterSeq ${afterSeq}`,
        );
      }
    },
  },
  {
    name: 'invalid session ids (empty, over 1,024 bytes, NUL) are InvalidArgumentError everywhere',
    async run({ store }) {
      const invalid: [string, string][] = [
        ['an empty session id', ''],
        ['a 1,025-byte session id', `${'a'.repeat(1023)}é`],
        ['a session id with NUL', `nul\u0000${crypto.randomUUID()}`],
      ];
      for (const [what, id] of invalid) {
        await expectStoreError(
          store.append(id, {
            expectedSeq: 0,
            messages: messages(1),
            session: { init: sessionInit() },
            lease: null,
          }),
          'INVALID_ARGUMENT',
          `append with ${what}`,
        );
        await expectStoreError(store.load(id), 'INVALID_ARGUMENT', `load with ${what}`);
        await expectStoreError(
          store.acquireLease(id, { holder: 'a', ttlMs: 1000, init: sessionInit() }),
          'INVALID_ARGUMENT',
          `acquireLease with ${what}`,
        );
      }
    },
  },
  {
    name: 'a null or non-object argument to any method is InvalidArgumentError, never a raw TypeError, and writes nothing',
    async run(ctx) {
      const { store } = ctx;
      const { id, before } = await seeded(ctx, 'non-object');
      // Cast: a JavaScript caller (or a deserialised request) can pass anything.
      const loose = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      for (const bad of [null, 42, 'text', [], true]) {
        const label = preview(bad);
        const calls: [string, () => Promise<unknown>][] = [
          ['append', () => loose.append!(id, bad)],
          ['acquireLease', () => loose.acquireLease!(id, bad)],
          ['renewLease', () => loose.renewLease!(id, bad)],
          ['releaseLease', () => loose.releaseLease!(id, bad)],
          ['listSessions', () => loose.listSessions!(bad)],
          ['deleteIdleSessions', () => loose.deleteIdleSessions!(bad)],
          ['load (options)', () => loose.load!(id, bad)],
          ['load (session id)', () => loose.load!(bad)],
          ['deleteSession', () => loose.deleteSession!(bad)],
        ];
        for (const [method, call] of calls) {
          // A string is a valid-looking session id for the two calls that take one; skip it there.
          if (typeof bad === 'string' && (method === 'load (session id)' || method === 'deleteSession'))
            continue;
          await expectStoreError(call, 'INVALID_ARGUMENT', `${method}(${label})`);
        }
      }
      await assertUnchanged(ctx, id, before, 'calls with non-object arguments');
    },
  },
];

/** Runs the checks every refused write shares: typed error naming the path, nothing written. */
async function expectRefused(
  ctx: CheckContext,
  id: string,
  before: SessionSnapshot,
  operation: () => Promise<unknown>,
  argument: string,
  what: string,
): Promise<void> {
  const error = await expectStoreError(operation, 'INVALID_ARGUMENT', what);
  assert(
    typeof error.argument === 'string' && error.argument.startsWith(argument),
    `${what}: InvalidArgumentError names ${preview(error.argument)}, expected the path ${preview(argument)}`,
  );
  await assertUnchanged(ctx, id, before, what);
}

/** After refused writes the session must still load, take an append at its head, and lease. */
async function assertStillUsable(ctx: CheckContext, id: string, what: string): Promise<void> {
  const loaded = await ctx.store.load(id);
  assert(loaded, `${what}: the session no longer loads`);
  const head = loaded.session.headSeq;
  const next = message();
  assertEqual(
    await ctx.store.append(id, { expectedSeq: head, messages: [next], lease: null }),
    { headSeq: head + 1 },
    `${what}: append at the head afterwards`,
  );
  const init = { ...sessionInit(), ownerId: loaded.session.ownerId, tenantId: loaded.session.tenantId };
  const lease = await ctx.store.acquireLease(id, { holder: `h-${plainId()}`, ttlMs: 30_000, init });
  await ctx.store.releaseLease(id, { holder: lease.session.lease?.holder ?? '', epoch: lease.epoch });
  const reloaded = await ctx.store.load(id);
  assertMessages(reloaded?.messages.slice(-1) ?? [], asRecords([next], head + 1), `${what}: load afterwards`);
  if (!ctx.store.durable || ctx.target.durable === false) return;
  // And run() can carry on with it: a new turn commits and completes.
  const agent = defineAgent({ name: 'conformance-agent', instructions: 'Answer.' });
  // Answers the same whatever the session holds (scriptedLlm picks its step by assistant messages).
  const llm: LlmAdapter = {
    generate: async () => ({
      text: 'Still here.',
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
    }),
  };
  const turn = await run(agent, { store: ctx.store, sessionId: id, message: 'Still there?', llm });
  assertEqual([turn.status, turn.response], ['complete', 'Still here.'], `${what}: a run() on the session`);
}

/** Why a store keeps a value it never validated. */
const SNAPSHOT_CAUSE =
  "the store validated the caller's live objects and then read them again to store them; validate and store one copy (snapshotInput from @agentstore/core/store)";

const errorText = (error: unknown) =>
  error instanceof Error
    ? `${error.name} (code ${String((error as { code?: unknown }).code)}): ${error.message}`
    : preview(error);

/** An accepted shifting append must be stored as one valid answer, the same through load and the raw reader. */
async function assertStoredOnce(
  ctx: CheckContext,
  id: string,
  head: number,
  shifting: ShiftingAppend,
  what: string,
): Promise<void> {
  const loaded = await ctx.store
    .load(id)
    .catch((error: unknown) =>
      violation(`${what}: the session no longer loads (${errorText(error)}) — ${SNAPSHOT_CAUSE}`),
    );
  assert(loaded, `${what}: the session is gone`);
  const count = shifting.stored.length;
  assertEqual(loaded.session.headSeq, head + count, `${what}: headSeq after the append`);
  const stored = loaded.messages.slice(-count);
  const expected = asRecords(shifting.stored, head + 1);
  assert(
    sameData(stored, expected),
    `${what}: load returns ${preview(stored)}, not the value that was read and validated, ${preview(expected)} — ${SNAPSHOT_CAUSE}`,
  );
  if (shifting.storedState !== undefined) {
    assert(
      sameData(loaded.session.state, shifting.storedState),
      `${what}: load returns the state ${preview(loaded.session.state)}, not the value that was validated, ${preview(shifting.storedState)} — ${SNAPSHOT_CAUSE}`,
    );
  }
  const raw = ctx.capabilities.raw;
  if (!raw) return;
  const rows = await raw.messages(id);
  assertEqual(rows.length, head + count, `${what}: raw message rows after the append`);
  assertEqual(
    rows.slice(-count).map(({ seq, id, role, content }) => ({ seq, id, role, content })),
    expected.map(({ seq, id, role, content }) => ({ seq, id, role, content })),
    `${what}: the raw rows of the appended messages (${SNAPSHOT_CAUSE} when they differ)`,
  );
}

export const boundaryChecks: ConformanceCheck[] = [
  {
    name: 'input that answers differently on each read (a getter, a Proxy, a hidden toJSON) is refused with a typed error, or stored as the one value validated',
    timeoutMs: 60_000,
    async run(ctx) {
      const { id } = await seeded(ctx, 'shifting');
      for (const shifting of shiftingAppends()) {
        const what = `append with ${shifting.what}`;
        const before = await snapshot(ctx, id);
        const head = before.loaded?.session.headSeq ?? 0;
        let refused: unknown;
        try {
          assertEqual(
            await ctx.store.append(id, shifting.input(head)),
            { headSeq: head + shifting.stored.length },
            `${what}: result`,
          );
        } catch (error) {
          if (error instanceof ConformanceViolation) throw error;
          refused = error ?? new Error(String(error));
        }
        if (refused === undefined) {
          await assertStoredOnce(ctx, id, head, shifting, what);
          continue;
        }
        assert(
          refused instanceof Error && typeof (refused as { code?: unknown }).code === 'string',
          `${what}: threw ${errorText(refused)}, not a typed error with a code — ${SNAPSHOT_CAUSE}`,
        );
        await assertUnchanged(ctx, id, before, `${what} (refused)`);
      }
      await assertStillUsable(ctx, id, 'after input that changes between reads');
    },
  },
  {
    name: 'hostile values in every field of an append are InvalidArgumentError naming the path; nothing is written',
    timeoutMs: 120_000,
    async run(ctx) {
      const { id, before } = await seeded(ctx, 'hostile-values');
      for (const hostile of hostileAppends()) {
        await expectRefused(
          ctx,
          id,
          before,
          () => ctx.store.append(id, hostile.input(2)),
          hostile.argument,
          `append with ${hostile.what}`,
        );
        // The first append of a session must not create it either.
        const fresh = freshId('hostile-new');
        const input = hostile.input(0);
        const first = { ...input, session: { init: sessionInit(), ...input.session } };
        await expectRefused(
          ctx,
          fresh,
          nothing,
          () => ctx.store.append(fresh, first),
          hostile.argument,
          `first append with ${hostile.what}`,
        );
      }
      await assertStillUsable(ctx, id, 'after every hostile append');
    },
  },
  {
    name: 'lone surrogates and non-JSON values are refused by acquireLease, renewLease, releaseLease, listSessions, deleteSession and load',
    timeoutMs: 60_000,
    async run(ctx) {
      const { store } = ctx;
      const { id, before } = await seeded(ctx, 'hostile-methods');
      const init = sessionInit();
      const attempts: [string, string, () => Promise<unknown>][] = [];
      for (const bad of LONE_SURROGATES) {
        attempts.push(
          ['load', 'sessionId', () => store.load(bad)],
          ['deleteSession', 'sessionId', () => store.deleteSession(bad)],
          [
            'acquireLease of the id',
            'sessionId',
            () => store.acquireLease(bad, { holder: 'h', ttlMs: 30_000, init }),
          ],
          [
            'acquireLease holder',
            'holder',
            () => store.acquireLease(id, { holder: bad, ttlMs: 30_000, init }),
          ],
          [
            'acquireLease ownerId',
            'init.ownerId',
            () => store.acquireLease(id, { holder: 'h', ttlMs: 30_000, init: { ...init, ownerId: bad } }),
          ],
          [
            'acquireLease tenantId',
            'init.tenantId',
            () => store.acquireLease(id, { holder: 'h', ttlMs: 30_000, init: { ...init, tenantId: bad } }),
          ],
          [
            'acquireLease agentName',
            'init.agentName',
            () => store.acquireLease(id, { holder: 'h', ttlMs: 30_000, init: { ...init, agentName: bad } }),
          ],
          [
            'renewLease holder',
            'input.holder',
            () => store.renewLease(id, { holder: bad, epoch: 1, ttlMs: 30_000 }),
          ],
          ['releaseLease holder', 'input.holder', () => store.releaseLease(id, { holder: bad, epoch: 1 })],
          ['listSessions ownerId', 'ownerId', () => store.listSessions({ ownerId: bad, limit: 5 })],
          ['listSessions tenantId', 'tenantId', () => store.listSessions({ tenantId: bad, limit: 5 })],
          ['listSessions agentName', 'agentName', () => store.listSessions({ agentName: bad, limit: 5 })],
          ['listSessions cursor', 'cursor', () => store.listSessions({ limit: 5, cursor: bad })],
        );
      }
      const badState: [string, unknown][] = [
        ['a Date', { d: new Date(0) }],
        ['a BigInt', { n: 1n }],
        ['a function', () => 1],
      ];
      for (const [what, state] of badState) {
        attempts.push([
          `acquireLease with ${what} in init.state`,
          'init.state',
          () =>
            store.acquireLease(id, { holder: 'h', ttlMs: 30_000, init: { ...init, state: state as never } }),
        ]);
      }
      for (const [what, argument, operation] of attempts) {
        await expectRefused(ctx, id, before, operation, argument, what);
      }
      await assertStillUsable(ctx, id, 'after every refused call');
    },
  },
];

export const limitSpec: ConformanceSpec = {
  title: 'limits and input validation',
  checks: [...limitChecks, ...boundaryChecks],
};

/** Limits: declared sizes hold exactly, over-limit and malformed input is refused before any write. */
export function describeLimits(target: ConformanceTarget): void {
  describeSpec(target, limitSpec);
}
