import type { JsonValue, MessagePart, MessageRecord, NewMessage } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { assert, expectStoreError, preview, sameData, violation } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { asRecords, freshId, message } from '../fixtures.ts';

// What reasoning models return must come back byte for byte: providers refuse a follow-up whose
// signed thinking, thought signature or encrypted reasoning was dropped or altered.

const SIGNATURE = `EqQB${'Kx9/+a'.repeat(1_700)}==`; // 10 KB, base64-like
/** Provider options as deep as the boundary allows inside a stored message. */
const deep = (levels: number): { [key: string]: JsonValue } => {
  let value: { [key: string]: JsonValue } = { leaf: 'ünïcödé\u0000✓' };
  for (let i = 0; i < levels; i++) value = { [`level${i}`]: value, [`n${i}`]: i * 0.5 };
  return value;
};
const wide = Object.fromEntries(
  Array.from({ length: 1_000 }, (_, i) => [`k${i}-é`, i % 2 ? `v${i}` : [i, null, true]]),
);

function reasoningTurn(): NewMessage[] {
  const user = message({
    role: 'user',
    content: 'Look at these. 日本語 \u0000 end',
    parts: [
      {
        type: 'text',
        text: 'Look at these. 日本語 \u0000 end',
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      {
        type: 'file',
        mediaType: 'application/pdf',
        url: 'https://example.com/a%20b.pdf?x=1#p',
        filename: 'facture-été.pdf',
      },
    ],
  });
  const assistant = message({
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [{ id: 'call\u0000ü', name: 'lookup', input: { id: 7 } }],
    parts: [
      {
        type: 'reasoning',
        text: 'They want order 7 — 🦜',
        providerOptions: { anthropic: { signature: SIGNATURE } },
      },
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'cmVkYWN0ZWQ=' } } },
      {
        type: 'reasoning',
        text: '',
        providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: SIGNATURE } },
      },
      {
        type: 'text',
        text: 'Checking.',
        providerOptions: { google: { thoughtSignature: 'ts\u0000' }, deep: deep(40) },
      },
      { type: 'provider-tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: { q: 'order 7' } },
      {
        type: 'provider-tool-result',
        toolCallId: 'ws_1',
        toolName: 'web_search',
        result: [{ url: 'https://x.test' }],
        isError: false,
      },
      { type: 'source', source: { sourceType: 'url', id: 's1', url: 'https://x.test', title: 'X' } },
      { type: 'reasoning-file', mediaType: 'image/webp', data: 'UklGRg==' },
      { type: 'custom', kind: 'vendor.thing', providerOptions: { vendor: wide } },
      {
        type: 'tool-call',
        toolCallId: 'call\u0000ü',
        providerOptions: { google: { thoughtSignature: SIGNATURE } },
      },
    ],
    usage: {
      inputTokens: 1200,
      outputTokens: 340,
      reasoningTokens: 300,
      cachedInputTokens: 1000,
      modelId: 'claude-ü',
      responseId: 'msg_01',
    },
  });
  const result = message({
    role: 'tool',
    toolCallId: 'call\u0000ü',
    toolName: 'lookup',
    content: '{"status":"shipped"}',
    parts: [
      { type: 'text', text: 'Shipped; the label:' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ],
  });
  return [user, assistant, result];
}

/** Names what a store did to the parts, from the first message that came back different. */
function diagnose(sent: MessageRecord, got: MessageRecord | undefined): string {
  const where = `message seq ${sent.seq} (${sent.role})`;
  if (got === undefined) return `${where} is missing`;
  const parts = sent.parts ?? [];
  if (parts.length > 0 && got.parts === undefined) {
    return `${where} came back without its parts: the store keeps only the message fields it knows. Store the whole message (the JSON text validateAppendInput returns) so fields added to the contract survive`;
  }
  if (sent.usage !== undefined && !sameData(sent.usage, got.usage)) {
    return `${where} came back with usage ${preview(got.usage)} instead of ${preview(sent.usage)}`;
  }
  const gotParts = (got.parts ?? []) as MessagePart[];
  if (gotParts.length !== parts.length)
    return `${where} came back with ${gotParts.length} parts instead of ${parts.length}: a part was dropped or added`;
  const types = (list: MessagePart[]) => list.map((p) => p.type).join(',');
  if (
    types(gotParts) !== types(parts) ||
    parts.some((p, i) => !sameData(p, gotParts[i]) && gotParts.some((g) => sameData(g, p)))
  ) {
    return `${where} came back with its parts reordered (${types(gotParts)}): providers need them in the order returned (thinking before its tool call)`;
  }
  for (let i = 0; i < parts.length; i++) {
    const want = parts[i]!;
    const have = gotParts[i]!;
    if (sameData(want, have)) continue;
    if (want.providerOptions !== undefined && typeof have.providerOptions === 'string') {
      return `${where}, part ${i} (${want.type}): providerOptions came back as a string of JSON, not as the object stored: metadata must be kept as JSON, not serialised into a text field`;
    }
    if (!sameData(want.providerOptions, have.providerOptions)) {
      return `${where}, part ${i} (${want.type}): providerOptions changed (got ${preview(have.providerOptions, 200)}): a provider refuses a signature or encrypted reasoning that is not byte-identical`;
    }
    return `${where}, part ${i} (${want.type}) changed: expected ${preview(want, 300)}, got ${preview(have, 300)}`;
  }
  return `${where} changed outside its parts: expected ${preview(sent, 300)}, got ${preview(got, 300)}`;
}

const partsChecks: ConformanceCheck[] = [
  {
    name: 'keeps every message part, its provider options and the call usage byte for byte',
    async run({ store }) {
      const id = freshId('parts');
      const sent = reasoningTurn();
      await store.append(id, {
        expectedSeq: 0,
        messages: sent,
        session: { init: { agentName: 'parts', ownerId: null, tenantId: null, state: null } },
        lease: null,
      });
      const loaded = await store.load(id);
      assert(loaded, 'load after appending parts returned null');
      const expected = asRecords(sent, 1);
      for (let i = 0; i < expected.length; i++) {
        if (!sameData(loaded.messages[i], expected[i])) violation(diagnose(expected[i]!, loaded.messages[i]));
      }
    },
  },
  {
    name: 'stores a file as large as its message limit and refuses one byte more before writing',
    async run({ store }) {
      const id = freshId('file-limit');
      const limit = Math.min(
        store.limits.maxMessageBytes,
        store.limits.maxAppendBytes ?? Number.POSITIVE_INFINITY,
      );
      const file = (data: string, filename: string): NewMessage => ({
        ...message({ id: 'file-message', role: 'user', content: '' }),
        parts: [{ type: 'file', mediaType: 'application/octet-stream', data, filename }],
      });
      const empty = messageByteLength(file('', ''));
      // Base64 comes in blocks of 4; the filename takes up what the blocks leave.
      const blocks = Math.floor((limit - empty) / 4);
      const data = 'QUJD'.repeat(blocks);
      const exact = file(data, 'x'.repeat(limit - empty - blocks * 4));
      assert(
        messageByteLength(exact) === limit,
        `built a ${messageByteLength(exact)}-byte message, not ${limit}`,
      );
      const over = {
        ...exact,
        parts: [{ ...exact.parts![0]!, filename: `${(exact.parts![0] as { filename: string }).filename}y` }],
      } as NewMessage;
      await expectStoreError(
        store.append(id, { expectedSeq: 0, messages: [over], lease: null }),
        'PAYLOAD_TOO_LARGE',
        `a message holding a file one byte over the store's limit (${limit} bytes)`,
      );
      assert((await store.load(id)) === null, 'a refused over-limit file left a session behind');
      await store.append(id, { expectedSeq: 0, messages: [exact], lease: null });
      const loaded = await store.load(id);
      const back = loaded?.messages[0]?.parts?.[0] as { data?: string } | undefined;
      assert(
        back?.data === data,
        `a ${limit}-byte message with a file did not come back whole (${back?.data?.length ?? 0} of ${data.length} base64 characters)`,
      );
    },
  },
];

export const messagePartsSpec: ConformanceSpec = { title: 'message parts', checks: partsChecks };
