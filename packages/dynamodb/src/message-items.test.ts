import { expect, it } from 'vitest';
import { A } from './attributes.ts';
import { PIECE_BYTES } from './limits.ts';
import { decodeMessages, encodeMessage, splitUtf8 } from './message-items.ts';

it('cuts UTF-8 text into pieces that never split a character', () => {
  const text = 'aé😀€'.repeat(50);
  for (const max of [4, 5, 7, 64]) {
    const pieces = splitUtf8(text, max);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(max);
      expect(piece).toBe(Buffer.from(piece).toString()); // no lone surrogate, no replacement char
    }
  }
});

it('stores a large message as a head item plus chunks and decodes it back', () => {
  const message = {
    id: 'm1',
    role: 'tool' as const,
    content: '😀'.repeat(PIECE_BYTES / 2),
    createdAt: 'now',
  };
  const { items, bytes } = encodeMessage('s', 1, 7, message, 123);
  expect(items).toHaveLength(3);
  expect(items[0]![A.parts]).toEqual({ N: '2' });
  expect(items.every((item) => item[A.ttl]?.N === '123')).toBe(true);
  expect(bytes).toBeGreaterThan(Buffer.byteLength(JSON.stringify(message)));
  expect(bytes).toBeLessThan(Buffer.byteLength(JSON.stringify(message)) + 3 * 100);
  expect(decodeMessages('s', items)).toEqual([{ ...message, seq: 7 }]);
  expect(() => decodeMessages('s', [items[0]!, items[2]!])).toThrow(/chunk 1 of 2/);
  // Chunks no message item claims (leftovers of an earlier session whose message 7 was larger)
  // are skipped: the small message now at seq 7 decodes alone.
  expect(decodeMessages('s', items.slice(1))).toEqual([]);
  const small = encodeMessage('s', 1, 7, { ...message, content: 'small' }, null).items;
  expect(decodeMessages('s', [...small, ...items.slice(1)])).toEqual([
    { ...message, content: 'small', seq: 7 },
  ]);
});

it('never joins a chunk of another message at the same seq (a leftover of an earlier session)', () => {
  const piece = PIECE_BYTES / 2;
  const old = { id: 'old', role: 'tool' as const, content: '😀'.repeat(piece), createdAt: 'then' };
  const fresh = { id: 'new', role: 'tool' as const, content: '🙂'.repeat(piece), createdAt: 'now' };
  const oldItems = encodeMessage('s', 1, 7, old, null).items;
  const freshItems = encodeMessage('s', 1, 7, fresh, null).items;
  expect(freshItems.every((item) => item[A.digest]?.S === freshItems[0]![A.digest]?.S)).toBe(true);
  // The new head with the old chunk 1 (a read that saw the chunk before the new one overwrote it).
  expect(() => decodeMessages('s', [freshItems[0]!, oldItems[1]!, freshItems[2]!])).toThrow(
    /chunk 1 of 2 is missing or not this message's/,
  );
  expect(decodeMessages('s', freshItems)).toEqual([{ ...fresh, seq: 7 }]);
});
