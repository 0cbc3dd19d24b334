import type { JsonValue, NewMessage } from '@agentstore/core';
import { utf8ByteLength } from '@agentstore/core/store';
import { assert, assertEqual, assertMessages, expectStoreError, preview, violation } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { appendInChunks, asRecords, message, plainId, sessionInit } from '../fixtures.ts';
import { LONE_SURROGATES, REPLACEMENT_TWIN } from '../hostile-values.ts';

/** Text that breaks naive SQL, LIKE patterns, Redis keys and hash tags, Lua, JSON paths and file paths. */
export const HOSTILE_TEXTS: readonly string[] = [
  `it's "quoted" and \`ticked\``,
  '100%_done',
  '%',
  '_',
  '{}',
  '{a}:b',
  'line\nbreak\r\nand\ttab',
  '  spaces  around  ',
  'ünïcödé 日本語 🦜 \u00e9 e\u0301',
  "'; DROP TABLE x; --",
  '" OR 1=1 --',
  '*',
  '?',
  '[a-z]',
  '\\',
  'back\\slash\\\\n',
  '$1 :name @var ?? %s %d',
  "redis.call('FLUSHALL')",
  ']]--[[ lua',
  'KEYS *',
  '../../etc/passwd',
  '$.path[0]',
  '\u2028\u2029',
  '</script><!--',
];

/** Makes `text` unique per run without hiding it: the random part goes after it. */
const hostileId = (text: string) => `${text}#${plainId()}`;

/** Ids at exactly 1,024 UTF-8 bytes, one ASCII and one multi-byte. */
function maxLengthIds(): string[] {
  const ascii = `${plainId()}:`;
  const wide = `${plainId()}:`;
  const wideRoom = 1024 - wide.length;
  const ids = [
    ascii + 'a'.repeat(1024 - ascii.length),
    wide + 'é'.repeat(Math.floor(wideRoom / 2)) + 'x'.repeat(wideRoom % 2),
  ];
  for (const id of ids)
    if (utf8ByteLength(id) !== 1024) throw new Error(`built a ${utf8ByteLength(id)}-byte id`);
  return ids;
}

const hostileIdChecks: ConformanceCheck[] = [
  {
    name: 'hostile and 1,024-byte session ids are stored and read back verbatim',
    timeoutMs: 60_000,
    async run({ store, capabilities }) {
      const tenantId = `tenant-${plainId()}`;
      const ids = [...HOSTILE_TEXTS.map(hostileId), ...maxLengthIds()];
      const init = sessionInit({ tenantId });
      const stored = new Map<string, NewMessage[]>();
      for (const id of ids) {
        const appended = [
          message({ content: `content of ${id}` }),
          message({ role: 'assistant', content: id }),
        ];
        await store.append(id, { expectedSeq: 0, messages: appended, session: { init }, lease: null });
        stored.set(id, appended);
      }
      for (const id of ids) {
        const loaded = await store.load(id);
        assert(loaded, `load of session ${preview(id)} returned null`);
        assertEqual(loaded.session.id, id, 'session.id read back');
        assertMessages(loaded.messages, asRecords(stored.get(id)!, 1), `messages of session ${preview(id)}`);
        const lease = await store.acquireLease(id, { holder: id, ttlMs: 30_000, init });
        assertEqual(lease.session.id, id, 'session.id returned by acquireLease');
        assertEqual(
          await store.renewLease(id, { holder: id, epoch: lease.epoch, ttlMs: 30_000 }).then(() => true),
          true,
          'renewLease',
        );
        assertEqual(
          await store.releaseLease(id, { holder: id, epoch: lease.epoch }),
          { released: true },
          'releaseLease',
        );
        if (capabilities.raw) {
          assertEqual((await capabilities.raw.session(id))?.id, id, `raw session id of ${preview(id)}`);
          assertEqual((await capabilities.raw.messages(id)).length, 2, `raw message rows of ${preview(id)}`);
        }
      }
      const listed: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listSessions({ tenantId, limit: 7, cursor });
        listed.push(...page.sessions.map((s) => s.id));
        cursor = page.nextCursor;
      } while (cursor !== null && listed.length <= ids.length);
      assertEqual(listed.length, ids.length, 'number of hostile-id sessions listed, following nextCursor');
      assertEqual([...listed].sort(), [...ids].sort(), 'hostile ids listed verbatim');
      for (const id of ids)
        assertEqual(await store.deleteSession(id), { deleted: true }, `deleteSession ${preview(id)}`);
      for (const id of ids)
        assertEqual(await store.load(id), null, `load after deleteSession ${preview(id)}`);
    },
  },
  {
    name: 'ids that differ only in special characters, case, spacing or normalization do not collide',
    async run({ store }) {
      const stem = plainId();
      const variants = [
        `a_b`,
        'a%b',
        'a.b',
        'a*b',
        'a?b',
        'a\\b',
        "a'b",
        'a"b',
        'a b',
        'a  b',
        'a\nb',
        'a{b}',
        '{a}b',
        'a:b',
        'A_b',
        'a_b ',
        ' a_b',
        'a\u00e9b',
        'ae\u0301b',
        'a\u00adb',
        'a_B',
      ].map((variant) => `${stem}-${variant}`);
      for (const [i, id] of variants.entries()) {
        try {
          await store.append(id, {
            expectedSeq: 0,
            messages: [message({ content: `variant ${i}` })],
            session: { init: sessionInit({ state: { variant: i } }) },
            lease: null,
          });
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'SEQ_CONFLICT') throw error;
          violation(
            `the first append to the new session ${preview(id)} conflicted: its id collides with an earlier one`,
          );
        }
      }
      for (const [i, id] of variants.entries()) {
        const loaded = await store.load(id);
        assert(loaded, `load of ${preview(id)} returned null`);
        assertEqual(
          [loaded.session.id, loaded.session.state, loaded.messages.map((m) => m.content)],
          [id, { variant: i }, [`variant ${i}`]],
          `session ${preview(id)} (variant ${i}) read back`,
        );
      }
    },
  },
  {
    name: 'hostile payloads (message ids, tool names, contents, state keys) are stored verbatim',
    async run({ store }) {
      const id = `payload-${plainId()}`;
      const state: JsonValue = Object.fromEntries(HOSTILE_TEXTS.map((text, i) => [text, [i, text]]));
      const appended: NewMessage[] = HOSTILE_TEXTS.flatMap((text, i): NewMessage[] => [
        message({
          id: `${text}#${i}`,
          role: 'assistant',
          content: text,
          toolCalls: [
            { id: `call ${text}`, name: text, input: { [text]: text, nested: { [`$${text}`]: [text] } } },
          ],
        }),
        message({
          id: `result ${text}#${i}`,
          role: 'tool',
          content: text,
          toolCallId: `call ${text}`,
          toolName: text,
          kind: text,
          origin: { via: 'handler', attempt: i + 1 },
        }),
      ]);
      await appendInChunks(store, id, appended, { init: sessionInit(), state, chunkSize: 10 });
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      assertMessages(loaded.messages, asRecords(appended, 1), 'hostile payloads');
      assertEqual(loaded.session.state, state, 'session state with hostile keys');
    },
  },
  {
    name: 'lone surrogates (x\\uD800, x\\uDBFF, x\\uDFFF) are refused everywhere and never alias x\\uFFFD',
    async run({ store, capabilities }) {
      const stem = plainId();
      const twin = `${stem}-${REPLACEMENT_TWIN}`;
      const owner = `user-${REPLACEMENT_TWIN}-${stem}`;
      const init = sessionInit({ ownerId: owner });
      await store.append(twin, { expectedSeq: 0, messages: [message()], session: { init }, lease: null });
      for (const lone of LONE_SURROGATES) {
        const id = `${stem}-${lone}`;
        const alias = `user-${lone}-${stem}`;
        await expectStoreError(
          store.append(id, { expectedSeq: 0, messages: [message()], session: { init }, lease: null }),
          'INVALID_ARGUMENT',
          `append to session ${preview(id)}`,
        );
        await expectStoreError(
          store.append(id, { expectedSeq: 1, messages: [message()], lease: null }),
          'INVALID_ARGUMENT',
          `append at seq 1 to session ${preview(id)} (it would alias ${preview(twin)})`,
        );
        await expectStoreError(store.load(id), 'INVALID_ARGUMENT', `load of ${preview(id)}`);
        // The owner whose id would alias the real owner's must not get the session's lease.
        await expectStoreError(
          store.acquireLease(twin, { holder: 'h', ttlMs: 30_000, init: sessionInit({ ownerId: alias }) }),
          'INVALID_ARGUMENT',
          `acquireLease of ${preview(twin)} by owner ${preview(alias)}`,
        );
        await expectStoreError(
          store.listSessions({ ownerId: alias, limit: 5 }),
          'INVALID_ARGUMENT',
          `listSessions of owner ${preview(alias)}`,
        );
      }
      const loaded = await store.load(twin);
      assertEqual(
        [loaded?.session.id, loaded?.session.ownerId, loaded?.messages.length],
        [twin, owner, 1],
        'the U+FFFD session read back',
      );
      const listed = await store.listSessions({ ownerId: owner, limit: 5 });
      assertEqual(
        listed.sessions.map((s) => s.id),
        [twin],
        `sessions of owner ${preview(owner)}`,
      );
      if (capabilities.raw) {
        assertEqual(
          (await capabilities.raw.messages(twin)).length,
          1,
          'raw message rows of the U+FFFD session',
        );
      }
    },
  },
];

export const hostileIdSpec: ConformanceSpec = { title: 'hostile identifiers', checks: hostileIdChecks };
