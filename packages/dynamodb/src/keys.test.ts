import { expect, it } from 'vitest';
import { chunkSk, messageSk, parseSk, SESSION_SK } from './keys.ts';

it('sorts messages by seq, chunks right after their message, and the session item last', () => {
  const keys = [
    SESSION_SK,
    messageSk(10),
    chunkSk(9, 2),
    messageSk(9),
    chunkSk(9, 1),
    messageSk(Number.MAX_SAFE_INTEGER),
    messageSk(1),
  ];
  // DynamoDB orders S sort keys by UTF-8 bytes; these keys are ASCII, so code-unit order is the same.
  expect([...keys].sort()).toEqual([
    messageSk(1),
    messageSk(9),
    chunkSk(9, 1),
    chunkSk(9, 2),
    messageSk(10),
    messageSk(Number.MAX_SAFE_INTEGER),
    SESSION_SK,
  ]);
  expect(parseSk(messageSk(42))).toEqual({ kind: 'message', seq: 42 });
  expect(parseSk(chunkSk(42, 3))).toEqual({ kind: 'chunk', seq: 42, index: 3 });
  expect(parseSk(SESSION_SK)).toEqual({ kind: 'session' });
  expect(parseSk('m#12')).toBeNull();
});
