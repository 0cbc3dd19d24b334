import { type AppendInput, defineAgent, type LlmAdapter, type NewMessage, run } from '@agentstore/core';
import {
  assert,
  assertEqual,
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
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { asRecords, freshId, message, messages, plainId, sessionInit } from '../fixtures.ts';
import { hostileAppends, LONE_SURROGATES, type ShiftingAppend, shiftingAppends } from '../hostile-values.ts';
import { nothing, seeded } from './seeded.ts';

/** Malformed ids and input: refused with a typed error naming the path, nothing written. */
const invalidInputChecks: ConformanceCheck[] = [
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

const boundaryChecks: ConformanceCheck[] = [
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

/** Input validation: malformed, hostile and shifting input is refused (or stored as validated) before any write. */
export const inputValidationSpec: ConformanceSpec = {
  title: 'input validation',
  checks: [...invalidInputChecks, ...boundaryChecks],
};
