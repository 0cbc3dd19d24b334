import type { JsonValue } from '@agentstore/core';
import { assert, assertEqual, assertMessages, preview, violation } from '../assertions.ts';
import type { ConformanceCheck } from '../check.ts';
import { asRecords, freshId, message, messages, seedSession, sessionInit } from '../fixtures.ts';

/**
 * Values that drivers and decoders get wrong (U+0000, an own `__proto__` key), and
 * acknowledgements every instance must see.
 */
export const appendLoadEdgeChecks: ConformanceCheck[] = [
  {
    name: 'U+0000 inside message content, ids, tool input, tool output and session state round-trips exactly',
    async run({ store, capabilities }) {
      const id = freshId('nul');
      const input: JsonValue = {
        path: 'a\u0000b',
        'key\u0000': ['\u0000'],
        nested: { bytes: 'PK\u0003\u0004\u0000\u0000' },
      };
      const state: JsonValue = { cursor: 'x\u0000y', list: ['\u0000'] };
      // Message and tool-call ids live inside the message, where the boundary allows U+0000 too.
      const appended = [
        message({ id: `${freshId('nul-id')}\u0000tail`, content: 'user text with a NUL \u0000 inside' }),
        message({
          role: 'assistant',
          content: '\u0000',
          toolCalls: [{ id: 'call_\u0000nul', name: 'read_file', input }],
        }),
        message({
          role: 'tool',
          toolCallId: 'call_\u0000nul',
          toolName: 'read_file',
          content: 'PK\u0003\u0004\u0000\u0000 binary-ish output',
        }),
      ];
      try {
        await store.append(id, {
          expectedSeq: 0,
          messages: appended,
          session: { init: sessionInit({ state }), state },
          lease: null,
        });
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        violation(
          `an append whose content, tool input, tool output and state hold U+0000 failed with ${(error as Error).name} (code ${String(code)}): ${(error as Error).message} — the store refuses a character the boundary accepts (PostgreSQL text and jsonb cannot hold U+0000: store such values as escaped JSON text or bytes), so a tool that returns binary-looking output fails the run`,
        );
      }
      const loaded = await store.load(id);
      assert(loaded, 'load after an append holding U+0000 returned null');
      const cut = loaded.messages.findIndex(
        (m, i) => m.content !== appended[i]?.content && m.content === appended[i]?.content.split('\u0000')[0],
      );
      if (cut >= 0) {
        violation(
          `message #${cut + 1}'s content ${preview(appended[cut]?.content)} came back cut off at its first U+0000 as ${preview(loaded.messages[cut]?.content)} — the store or its driver reads text as a C string (node:sqlite reads a TEXT value only up to U+0000: read it as bytes, CAST(content AS BLOB), and decode the UTF-8)`,
        );
      }
      const idCut = loaded.messages.findIndex(
        (m, i) => m.id !== appended[i]?.id && m.id === appended[i]?.id.split('\u0000')[0],
      );
      if (idCut >= 0) {
        violation(
          `message #${idCut + 1}'s id ${preview(appended[idCut]?.id)} came back cut off at its first U+0000 as ${preview(loaded.messages[idCut]?.id)} — the store or its driver reads the id column as a C string (node:sqlite reads a TEXT value only up to U+0000: read it as bytes, CAST(id AS BLOB), and decode the UTF-8); two ids differing after a U+0000 would alias`,
        );
      }
      assertMessages(loaded.messages, asRecords(appended, 1), 'messages holding U+0000');
      assertEqual(loaded.session.state, state, 'session state holding U+0000');
      if (capabilities.raw) {
        assertEqual(
          (await capabilities.raw.messages(id)).map((row) => row.content),
          appended.map((m) => m.content),
          'raw message contents holding U+0000',
        );
      }
    },
  },
  {
    name: 'an own "__proto__" key in a tool input, the state and a nested object round-trips as an own key and changes no prototype',
    async run({ store }) {
      const id = freshId('proto');
      // JSON.parse makes "__proto__" an own key, as a model's tool-call arguments arrive.
      const own = () => JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, JsonValue>;
      const input = { outer: own(), top: own() } as JsonValue;
      const direct = own() as JsonValue;
      const state = { nested: own() } as JsonValue;
      const appended = [
        message({
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'call_proto_1', name: 'tool', input: direct },
            { id: 'call_proto_2', name: 'tool', input },
          ],
        }),
      ];
      await store.append(id, {
        expectedSeq: 0,
        messages: appended,
        session: { init: sessionInit(), state },
        lease: null,
      });
      const loaded = await store.load(id);
      assert(loaded, 'load returned null');
      const calls = loaded.messages[0]?.toolCalls ?? [];
      const objects: [string, unknown][] = [
        ['toolCalls[0].input', calls[0]?.input],
        ['toolCalls[1].input.outer', (calls[1]?.input as Record<string, unknown> | undefined)?.outer],
        ['toolCalls[1].input.top', (calls[1]?.input as Record<string, unknown> | undefined)?.top],
        ['session.state.nested', (loaded.session.state as Record<string, unknown> | null)?.nested],
      ];
      for (const [where, value] of objects) {
        const object = value as Record<string, unknown> | undefined;
        const prototype = object === undefined || object === null ? undefined : Object.getPrototypeOf(object);
        if (
          typeof object !== 'object' ||
          object === null ||
          !Object.hasOwn(object, '__proto__') ||
          (prototype !== Object.prototype && prototype !== null) ||
          'polluted' in object
        ) {
          violation(
            `${where}: an own "__proto__" key came back as ${preview(object)}${object && typeof object === 'object' ? ` (own keys ${preview(Object.keys(object))}, inherits "polluted": ${String('polluted' in object)})` : ''} — the store decodes JSON into objects by assignment (Object.assign, a spread into {} or obj[key] = …), which turns "__proto__" into the prototype: the key is lost and the value leaks into every lookup. Decode with JSON.parse alone, or define keys with Object.defineProperty`,
          );
        }
      }
      assertMessages(loaded.messages, asRecords(appended, 1), 'messages with an own "__proto__" key');
      assertEqual(loaded.session.state, state, 'session state with an own "__proto__" key');
    },
  },
  {
    name: 'once an append is acknowledged, a load on another store instance that loaded the session before returns it (read-your-acks across instances)',
    async run({ store, target }) {
      const other = await target.createStore();
      const id = freshId('acks');
      try {
        await seedSession(store, id, 1);
        // Through the writer first: an instance that reads its own writes has them in the backend by now.
        await store.load(id);
        const seen = await other.load(id);
        // Stores that keep their data per instance (memoryStore()) share nothing to check.
        if (seen === null) return;
        let head = seen.session.headSeq;
        for (const [writer, reader, names] of [
          [store, other, 'instance A appended, instance B loaded'],
          [other, store, 'instance B appended, instance A loaded'],
          [store, other, 'instance A appended again, instance B loaded'],
        ] as const) {
          const appended = messages(2);
          const { headSeq } = await writer.append(id, { expectedSeq: head, messages: appended, lease: null });
          const loaded = await reader.load(id);
          const after = await reader.load(id, { afterSeq: head });
          if (loaded?.session.headSeq !== headSeq || after?.messages.at(-1)?.id !== appended.at(-1)?.id) {
            violation(
              `${names}: the append was acknowledged with headSeq ${headSeq}, but the other instance's load returned headSeq ${String(loaded?.session.headSeq)} and ${after?.messages.length ?? 0} messages after seq ${head} — an acknowledged write was not visible: either the store acknowledged it before it was durable (written behind, on a timer or a queue), or an instance serves sessions from a cache its own writes alone refresh. Every load must see every acknowledged append, whichever instance made it`,
            );
          }
          head = headSeq;
        }
      } finally {
        await (target.destroyStore ? target.destroyStore(other) : other.close());
      }
    },
  },
];
