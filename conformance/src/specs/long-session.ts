import type { NewMessage } from '@agentstore/core';
import { assert, assertEqual } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { appendInChunks, freshId, sessionInit } from '../fixtures.ts';

/** Messages in the long session unless the target declares `longSessionMessages`. */
export const DEFAULT_LONG_SESSION_MESSAGES = 20_000;

const longMessages = (count: number): NewMessage[] => {
  const createdAt = new Date().toISOString();
  // Ids that sort differently from seq order (a store ordering by id instead of seq is caught).
  return Array.from({ length: count }, (_, i) => ({
    id: `m-${((i * 7919) % count).toString(36)}-${i}`,
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `long session message ${i + 1}`,
    createdAt,
  }));
};

const longSessionChecks: ConformanceCheck[] = [
  {
    name: 'a long session loads whole and in seq order, from the start and from afterSeq, and matches the raw reader',
    timeoutMs: 300_000,
    async run({ store, target, capabilities }) {
      const count = target.longSessionMessages ?? DEFAULT_LONG_SESSION_MESSAGES;
      const id = freshId('long');
      const all = longMessages(count);
      const head = await appendInChunks(store, id, all, { init: sessionInit() });
      assertEqual(head, count, 'headSeq after appending the long session');
      const loaded = await store.load(id);
      assert(loaded, 'the long session is missing');
      assertEqual(loaded.session.headSeq, count, 'loaded headSeq');
      assertEqual(loaded.messages.length, count, 'messages loaded');
      for (let i = 0; i < count; i++) {
        const m = loaded.messages[i]!;
        if (m.seq !== i + 1 || m.id !== all[i]!.id || m.content !== all[i]!.content) {
          assert(
            false,
            `message #${i + 1} of ${count}: got seq ${m.seq}, id ${m.id}; expected ${all[i]!.id}`,
          );
        }
      }
      const tail = Math.min(1000, Math.floor(count / 2));
      const after = await store.load(id, { afterSeq: count - tail });
      assertEqual(after?.messages.length, tail, `load({ afterSeq: ${count - tail} }) message count`);
      assertEqual(after?.messages[0]?.seq, count - tail + 1, 'first seq after afterSeq');
      assertEqual(after?.messages[tail - 1]?.id, all[count - 1]!.id, 'last message after afterSeq');
      if (capabilities.raw) {
        const rows = await capabilities.raw.messages(id);
        assertEqual(rows.length, count, 'raw message rows of the long session');
        for (let i = 0; i < count; i++) {
          if (rows[i]!.seq !== i + 1 || rows[i]!.id !== all[i]!.id) {
            assert(
              false,
              `raw row #${i + 1}: seq ${rows[i]!.seq}, id ${rows[i]!.id}; expected ${all[i]!.id}`,
            );
          }
        }
        assertEqual((await capabilities.raw.session(id))?.headSeq, count, 'raw headSeq of the long session');
      }
      await store.deleteSession(id);
    },
  },
];

export const longSessionSpec: ConformanceSpec = { title: 'long sessions', checks: longSessionChecks };
