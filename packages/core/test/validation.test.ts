import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, PayloadTooLargeError } from '../src/index.ts';
import {
  messageByteLength,
  utf8ByteLength,
  utf8ByteLengthPortable,
  validateAppendInput,
  validateSessionId,
} from '../src/store/index.ts';

const limits = { maxMessageBytes: 200, maxMessagesPerAppend: 2 };
const message = (id: string, content = '') => ({
  id,
  role: 'user' as const,
  content,
  createdAt: '2026-01-01T00:00:00.000Z',
});

describe('validation', () => {
  it('measures UTF-8 bytes exactly like the encoder', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a😀b€é', '\ud800 lone surrogate']) {
      expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
      expect(utf8ByteLengthPortable(text)).toBe(new TextEncoder().encode(text).length);
    }
    expect(messageByteLength(message('m', '€'))).toBe(
      new TextEncoder().encode(JSON.stringify(message('m', '€'))).length,
    );
  });

  it('rejects malformed appends with a typed error naming the argument', () => {
    const cases: [unknown, string][] = [
      [{ expectedSeq: -1, messages: [message('a')], lease: null }, 'expectedSeq'],
      [{ expectedSeq: 1.5, messages: [message('a')], lease: null }, 'expectedSeq'],
      [{ expectedSeq: 0, messages: [], lease: null }, 'messages'],
      [{ expectedSeq: 0, messages: [{ ...message('a'), role: 'robot' }], lease: null }, 'messages[0].role'],
      [{ expectedSeq: 0, messages: [message('')], lease: null }, 'messages[0].id'],
      [{ expectedSeq: 0, messages: [message('a'), message('a')], lease: null }, 'messages[1].id'],
      [{ expectedSeq: 0, messages: [{ ...message('a'), content: 7 }], lease: null }, 'messages[0].content'],
      [{ expectedSeq: 0, messages: [message('a')], lease: { holder: 1 } }, 'lease.holder'],
    ];
    for (const [input, argument] of cases) {
      expect(() => validateAppendInput('s', input as never, limits)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', argument }),
      );
    }
  });

  it('returns the JSON text it measured, for adapters that store messages as JSON', () => {
    const input = { expectedSeq: 0, messages: [message('a', 'é'), message('b')], lease: null };
    expect(validateAppendInput('s', input, limits)).toEqual(input.messages.map((m) => JSON.stringify(m)));
  });

  it('enforces store limits with PayloadTooLargeError carrying the sizes', () => {
    const big = message('big', 'x'.repeat(300));
    const error = (() => {
      try {
        validateAppendInput('s', { expectedSeq: 0, messages: [big], lease: null }, limits);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({
      subject: 'message',
      messageId: 'big',
      size: messageByteLength(big),
      limit: 200,
    });
    expect(() =>
      validateAppendInput(
        's',
        { expectedSeq: 0, messages: [message('a'), message('b'), message('c')], lease: null },
        limits,
      ),
    ).toThrow(expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE', subject: 'append', size: 3, limit: 2 }));
  });

  it('accepts hostile but valid session ids and rejects empty, NUL and over-long ones', () => {
    for (const id of ["'; DROP TABLE s; --", '{tag}:x', 'a\nb', '%_*', 'é'.repeat(512)]) {
      expect(() => validateSessionId(id)).not.toThrow();
    }
    for (const id of ['', 'a\u0000b', 'x'.repeat(1025), 7]) {
      expect(() => validateSessionId(id)).toThrow(InvalidArgumentError);
    }
  });
});
