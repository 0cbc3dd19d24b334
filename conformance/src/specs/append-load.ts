import type { JsonValue, NewMessage } from '@agentstore/core';
import { assert, assertEqual, assertMessages, preview, violation } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import {
  appendInChunks,
  asRecords,
  freshId,
  message,
  messages,
  seedSession,
  sessionInit,
} from '../fixtures.ts';
import { appendLoadEdgeChecks } from './append-load-edges.ts';

const isIsoTimestamp = (value: unknown): boolean =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value));

const nestedInput: JsonValue = {
  query: 'weather in Zürich',
  filters: { units: 'metric', days: [1, 2, 3], exact: true, missing: null },
  deep: { a: { b: { c: { d: { e: { f: ['g', { h: 'i' }] } } } } } },
  numbers: [0, -1, 2.5, 1e21, 0.1, 9007199254740991, -3.75e-7],
  empty: { object: {}, array: [], string: '' },
  'unicode key 🔑': 'ünïcödé ✓',
  'key.with.dots': 'and $dollar',
};

const unicodeContents = [
  '',
  ' ',
  'héllo wörld — ñandú',
  '日本語のテキスト、中文、한국어',
  'مرحبا بالعالم (RTL) עברית',
  'emoji 🦜🔗 family 👩‍👩‍👧 flag 🇨🇭 skin 👍🏽',
  'combining e\u0301 vs \u00e9, zero-width\u200bjoiner',
  'lines\nand\r\nreturns\ttabs \u2028 \u2029',
  'quotes " \' ` and backslashes \\ \\\\ \\n (literal)',
  'control \u0001\u001f\u007f',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral 𐍈',
];

const appendLoadChecks: ConformanceCheck[] = [
  {
    name: 'declares its durability and limits truthfully',
    async run({ store, target }) {
      const declared = target.durable ?? true;
      assert(
        store.durable === declared,
        `store.durable is ${String(store.durable)} but the target declares durable: ${declared}` +
          (declared ? ' (set `durable: false` on the target for a non-durable store)' : ''),
      );
      const { maxMessageBytes, maxMessagesPerAppend } = store.limits ?? {};
      assert(
        Number.isSafeInteger(maxMessageBytes),
        `limits.maxMessageBytes must be an integer, got ${preview(maxMessageBytes)}`,
      );
      assert(
        Number.isSafeInteger(maxMessagesPerAppend) && maxMessagesPerAppend >= 2,
        `limits.maxMessagesPerAppend must be an integer ≥ 2 (run() commits the user and assistant messages together), got ${preview(maxMessagesPerAppend)}`,
      );
    },
  },
  {
    name: 'load of an unknown session returns null',
    async run({ store }) {
      assertEqual(await store.load(freshId('unknown')), null, 'load of a session never written');
    },
  },
  {
    name: 'the first append creates the session from init; later appends keep createdAt and owner',
    async run({ store }) {
      const id = freshId('create');
      const init = sessionInit({
        agentName: 'support-bot',
        ownerId: `owner-${crypto.randomUUID()}`,
        tenantId: `tenant-${crypto.randomUUID()}`,
        state: { plan: 'pro', steps: [1, 2] },
      });
      const first = messages(2);
      const result = await store.append(id, {
        expectedSeq: 0,
        messages: first,
        session: { init },
        lease: null,
      });
      assertEqual(result, { headSeq: 2 }, 'append result');
      const loaded = await store.load(id);
      assert(loaded, 'load after the first append returned null');
      const { session } = loaded;
      assertEqual(
        {
          id: session.id,
          agentName: session.agentName,
          ownerId: session.ownerId,
          tenantId: session.tenantId,
          state: session.state,
          headSeq: session.headSeq,
          lease: session.lease,
        },
        {
          id,
          agentName: init.agentName,
          ownerId: init.ownerId,
          tenantId: init.tenantId,
          state: init.state,
          headSeq: 2,
          lease: null,
        },
        'created session',
      );
      assert(
        isIsoTimestamp(session.createdAt),
        `createdAt is not an ISO-8601 string: ${preview(session.createdAt)}`,
      );
      assert(
        isIsoTimestamp(session.updatedAt),
        `updatedAt is not an ISO-8601 string: ${preview(session.updatedAt)}`,
      );
      assertMessages(loaded.messages, asRecords(first, 1), 'messages of the new session');

      const other = sessionInit({
        agentName: 'intruder',
        ownerId: 'someone-else',
        tenantId: 'another-tenant',
        state: 'x',
      });
      await store.append(id, {
        expectedSeq: 2,
        messages: messages(1),
        session: { init: other },
        lease: null,
      });
      const again = await store.load(id);
      assert(again, 'load after the second append returned null');
      assertEqual(again.session.createdAt, session.createdAt, 'createdAt after a later append');
      assertEqual(
        [again.session.agentName, again.session.ownerId, again.session.tenantId, again.session.state],
        [init.agentName, init.ownerId, init.tenantId, init.state],
        'agentName/ownerId/tenantId/state after an append whose init differs (init applies only on creation)',
      );
      assert(
        Date.parse(again.session.updatedAt) >= Date.parse(session.updatedAt),
        `updatedAt went back: ${session.updatedAt} then ${again.session.updatedAt}`,
      );
    },
  },
  {
    name: 'unicode and empty content round-trip exactly',
    async run({ store }) {
      const id = freshId('unicode');
      const appended = unicodeContents.map((content) => message({ content }));
      await appendInChunks(store, id, appended, { init: sessionInit() });
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      assertMessages(loaded.messages, asRecords(appended, 1), 'unicode messages');
    },
  },
  {
    name: 'tool calls with nested JSON input round-trip; absent optional fields stay absent',
    async run({ store }) {
      const id = freshId('tools');
      const appended: NewMessage[] = [
        message({ role: 'system', content: 'You are a test.' }),
        message({ role: 'user', content: 'What is the weather?' }),
        message({
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'call_1', name: 'weather', input: nestedInput },
            { id: 'call_2', name: 'noop', input: {} },
            { id: 'call_3', name: 'scalar', input: 'just a string' },
          ],
        }),
        message({ role: 'tool', content: '{"temp":21}', toolCallId: 'call_1', toolName: 'weather' }),
        message({
          role: 'tool',
          content: 'null',
          toolCallId: 'call_2',
          toolName: 'noop',
          kind: 'tool-error',
        }),
        message({
          role: 'tool',
          content: '{"error":"ToolDurabilityError"}',
          toolCallId: 'call_3',
          toolName: 'scalar',
          kind: 'tool-durability-error',
        }),
        message({ role: 'assistant', content: 'It is 21 °C.' }),
      ];
      await appendInChunks(store, id, appended, { init: sessionInit() });
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      assertMessages(loaded.messages, asRecords(appended, 1), 'tool messages');
      for (const m of loaded.messages) {
        for (const key of ['toolCalls', 'toolCallId', 'toolName', 'kind'] as const) {
          const sent = appended.find((a) => a.id === m.id)!;
          if (!(key in sent) && key in m) {
            violation(
              `message seq ${m.seq} came back with ${key} = ${preview(m[key])}; it was absent when appended`,
            );
          }
        }
      }
    },
  },
  {
    name: 'a 1,000-message session, appended in chunks within the limits, loads whole and in order',
    timeoutMs: 120_000,
    async run({ store }) {
      const id = freshId('thousand');
      const appended = messages(1000, { role: 'assistant' }).map((m, i) => ({
        ...m,
        content: `step ${i + 1}: ${'·'.repeat(i % 50)}`,
      }));
      const head = await appendInChunks(store, id, appended, { init: sessionInit(), chunkSize: 100 });
      assertEqual(head, 1000, 'headSeq returned by the last append');
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      assertEqual(loaded.session.headSeq, 1000, 'session.headSeq');
      assertMessages(loaded.messages, asRecords(appended, 1), '1,000-message session');
      const tail = await store.load(id, { afterSeq: 990 });
      assertMessages(tail?.messages ?? [], asRecords(appended.slice(990), 991), 'load({ afterSeq: 990 })');
    },
  },
  {
    name: 'afterSeq returns only the messages after it, and nothing past the head',
    async run({ store }) {
      const id = freshId('after-seq');
      const appended = await seedSession(store, id, 25);
      for (const afterSeq of [0, 1, 12, 24, 25, 26, 1000]) {
        const page = await store.load(id, { afterSeq });
        assert(page, `load({ afterSeq: ${afterSeq} }) returned null for an existing session`);
        assertEqual(page.session.headSeq, 25, `session.headSeq with afterSeq ${afterSeq}`);
        assertMessages(
          page.messages,
          asRecords(appended.slice(Math.min(afterSeq, 25)), Math.min(afterSeq, 25) + 1),
          `load({ afterSeq: ${afterSeq} })`,
        );
      }
      // Reading a session page by page with afterSeq sees every message once.
      const seen: string[] = [];
      let cursor = 0;
      while (cursor < 25) {
        const page = await store.load(id, { afterSeq: cursor });
        const chunk = page?.messages.slice(0, 7) ?? [];
        assert(chunk.length > 0, `paging stalled at afterSeq ${cursor}`);
        seen.push(...chunk.map((m) => m.id));
        cursor = chunk.at(-1)!.seq;
      }
      assertEqual(
        seen,
        appended.map((m) => m.id),
        'ids read page by page',
      );
    },
  },
  {
    name: 'session state is JSON that round-trips and is replaced by session.state',
    async run({ store }) {
      const id = freshId('state');
      const states: JsonValue[] = [
        { usage: { inputTokens: 10, outputTokens: 5 }, notes: ['a', 'b'], nested: { deep: { ok: true } } },
        [1, 'two', { three: 3 }, null, false, 2.5],
        'plain string ✓',
        null,
        42,
        { 'quote"key': "it's", unicode: '日本 🦜', empty: {} },
      ];
      await store.append(id, {
        expectedSeq: 0,
        messages: messages(1),
        session: { init: sessionInit({ state: { initial: true } }) },
        lease: null,
      });
      assertEqual((await store.load(id))?.session.state, { initial: true }, 'state from init');
      let head = 1;
      for (const state of states) {
        head = (
          await store.append(id, {
            expectedSeq: head,
            messages: messages(1),
            session: { state },
            lease: null,
          })
        ).headSeq;
        assertEqual((await store.load(id))?.session.state, state, 'state after an append that sets it');
      }
      await store.append(id, { expectedSeq: head, messages: messages(1), lease: null });
      assertEqual(
        (await store.load(id))?.session.state,
        states.at(-1),
        'state after an append without session.state (must be unchanged)',
      );
      head += 1;
      await store.append(id, {
        expectedSeq: head,
        messages: messages(1),
        session: { state: { last: 1 } },
        lease: null,
      });
      await store.append(id, { expectedSeq: head + 1, messages: messages(1), session: {}, lease: null });
      assertEqual(
        (await store.load(id))?.session.state,
        { last: 1 },
        'state after an append with session: {}',
      );
    },
  },
  {
    name: 'append returns the new headSeq and load agrees',
    async run({ store }) {
      const id = freshId('head');
      let expected = 0;
      for (const count of [1, 3, 2, 5]) {
        const result = await store.append(id, {
          expectedSeq: expected,
          messages: messages(count),
          session: { init: sessionInit() },
          lease: null,
        });
        expected += count;
        assertEqual(result, { headSeq: expected }, `append of ${count} messages`);
        assertEqual((await store.load(id))?.session.headSeq, expected, 'session.headSeq after the append');
      }
    },
  },
  {
    name: 'the raw reader sees exactly what load returns',
    requires: ['raw'],
    async run({ store, capabilities }) {
      const raw = capabilities.raw!;
      const id = freshId('raw');
      const init = sessionInit({
        ownerId: `owner-${crypto.randomUUID()}`,
        tenantId: `tenant-${crypto.randomUUID()}`,
      });
      const appended = [
        message({ role: 'user', content: 'hi 🦜' }),
        message({ role: 'assistant', content: '' }),
      ];
      await appendInChunks(store, id, appended, { init });
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      const row = await raw.session(id);
      assert(row, 'the raw reader finds no session row after an append');
      assertEqual(
        {
          id: row.id,
          headSeq: row.headSeq,
          ownerId: row.ownerId,
          tenantId: row.tenantId,
          leaseHolder: row.leaseHolder,
        },
        { id, headSeq: 2, ownerId: init.ownerId, tenantId: init.tenantId, leaseHolder: null },
        'raw session row',
      );
      assertEqual(
        await raw.messages(id),
        loaded.messages.map(({ seq, id: messageId, role, content }) => ({
          seq,
          id: messageId,
          role,
          content,
        })),
        'raw message rows',
      );
      assertEqual(await raw.session(freshId('raw-missing')), null, 'raw row of a session never written');
      assertEqual(await raw.messages(freshId('raw-missing')), [], 'raw messages of a session never written');
    },
  },
];

export const appendLoadSpec: ConformanceSpec = {
  title: 'append and load',
  checks: [...appendLoadChecks, ...appendLoadEdgeChecks],
};
