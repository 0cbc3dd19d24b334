import { expect, it } from 'vitest';
import { compareSessionIds } from '../src/store/index.ts';

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

it('orders ids by code point: U+E000–U+FFFF before characters above U+FFFF, unlike JavaScript <', () => {
  expect(['a', '\u{1F600}', '\uE000', '\uFFFF', '\u{10000}', '\uD7FF'].sort(compareSessionIds)).toEqual([
    'a',
    '\uD7FF',
    '\uE000',
    '\uFFFF',
    '\u{10000}',
    '\u{1F600}',
  ]);
  expect('\uE000' < '\u{1F600}').toBe(false);
});

it('agrees with the byte order of UTF-8 (what SQL binary collations, DynamoDB and Redis give) on every pair', () => {
  const pool = [
    '',
    'a',
    'b',
    'é',
    '\u07FF',
    '\u0800',
    '\uD7FF',
    '\uE000',
    '\uFFFD',
    '\uFFFF',
    '\u{10000}',
    '\u{1F600}',
    '\u{10FFFF}',
  ];
  const ids: string[] = [];
  for (const x of pool) for (const y of pool) ids.push(x + y, `${x}a${y}`);
  for (const a of ids) {
    for (const b of ids) {
      expect(Math.sign(compareSessionIds(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(
        Math.sign(utf8Order(a, b)),
      );
    }
  }
});
