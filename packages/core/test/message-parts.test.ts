import { describe, expect, it } from 'vitest';
import { defineAgent, type NewMessage, run } from '../src/index.ts';
import { isBase64 } from '../src/store/message-parts-check.ts';
import { validateAppendInput } from '../src/store/validation.ts';
import { durableMemoryStore, scriptedLlm, unreachableLlm } from '../src/testing/index.ts';

const limits = { maxMessageBytes: 64 * 1024 * 1024, maxMessagesPerAppend: 10 };
const append = (message: Partial<NewMessage>) =>
  validateAppendInput(
    's',
    {
      expectedSeq: 0,
      messages: [
        {
          id: 'm',
          role: 'assistant',
          content: '',
          createdAt: '2026-01-01T00:00:00Z',
          ...message,
        } as NewMessage,
      ],
      lease: null,
    },
    limits,
  );

describe('message parts at the store boundary', () => {
  it('checks base64 in one linear pass, also for a file of megabytes', () => {
    expect(isBase64('QUJD'.repeat(4_000_000))).toBe(true);
    expect(isBase64('QUI=')).toBe(true);
    expect(isBase64('QQ==')).toBe(true);
    expect(isBase64('Q===')).toBe(false);
    expect(isBase64('QU=I')).toBe(false);
    expect(isBase64('QUJ')).toBe(false);
    expect(isBase64('QU\nJD')).toBe(false);
  });

  it('refuses each malformed part naming its path, before anything is written', () => {
    const cases: [Partial<NewMessage>, RegExp][] = [
      [{ parts: {} as never }, /messages\[0\]\.parts: must be an array/],
      [{ parts: [{ type: 'image' } as never] }, /parts\[0\]\.type: must be one of/],
      [{ parts: [{ type: 'text', text: 'a', extra: 1 } as never] }, /parts\[0\]\.extra: is not a field here/],
      [
        { parts: [{ type: 'file', mediaType: 'image/png' } as never] },
        /exactly one of data \(base64\) and url/,
      ],
      [
        { parts: [{ type: 'file', mediaType: 'image/png', data: 'not base64!' }] },
        /parts\[0\]\.data: must be base64/,
      ],
      [{ parts: [{ type: 'file', mediaType: 'png', data: 'QQ==' }] }, /mediaType: must be a media type/],
      [
        { parts: [{ type: 'file', mediaType: 'image/png', url: 'relative/path' }] },
        /url: must be an absolute URL/,
      ],
      [
        { parts: [{ type: 'tool-call', toolCallId: 'nope' }] },
        /must be the id of one of the message's toolCalls/,
      ],
      [
        { toolCalls: [{ id: 'c', name: 't', input: {} }], parts: [{ type: 'text', text: 'a' }] },
        /has no tool-call part for the call "c"/,
      ],
      [
        {
          toolCalls: [{ id: 'c', name: 't', input: {} }],
          parts: [
            { type: 'tool-call', toolCallId: 'c' },
            { type: 'tool-call', toolCallId: 'c' },
          ],
        },
        /names a call that already has a part/,
      ],
      [
        { parts: [{ type: 'text', text: 'a', providerOptions: { x: 1 } as never }] },
        /providerOptions\.x: must be an object/,
      ],
      [
        { parts: [{ type: 'text', text: 'a', providerOptions: { x: { y: undefined } } as never }] },
        /not plain JSON|undefined/,
      ],
      [
        { role: 'user', parts: [{ type: 'reasoning', text: 'a' }] },
        /a user message cannot hold a reasoning part/,
      ],
      [{ usage: { inputTokens: -1, outputTokens: 0 } }, /usage\.inputTokens: must be a non-negative integer/],
      [{ usage: { outputTokens: 0 } as never }, /usage\.inputTokens: is required/],
      [{ role: 'user', usage: { inputTokens: 1, outputTokens: 1 } }, /kept on assistant messages only/],
    ];
    for (const [message, expected] of cases)
      expect(() => append(message), String(expected)).toThrow(expected);
  });
});

describe('run({ message }) with parts', () => {
  const agent = defineAgent({ name: 'vision', instructions: '' });

  it('stores text and files once encoded, and the model sees them as stored', async () => {
    const llm = scriptedLlm([{ text: 'A cat.' }]);
    const result = await run(agent, {
      store: durableMemoryStore(),
      sessionId: 'cat',
      llm,
      message: [
        { type: 'text', text: 'What is this? ' },
        { type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2, 3, 250]), filename: 'cat.png' },
        { type: 'file', mediaType: 'image/jpeg', data: new URL('https://example.com/cat.jpg') },
        { type: 'file', mediaType: 'text/plain', data: 'data:text/plain,h%C3%A9llo' },
        { type: 'text', text: 'Thanks.' },
      ],
    });
    const stored = result.messages[0]!;
    expect(stored.content).toBe('What is this? Thanks.');
    expect(stored.parts).toEqual([
      { type: 'text', text: 'What is this? ' },
      { type: 'file', mediaType: 'image/png', data: 'AQID+g==', filename: 'cat.png' },
      { type: 'file', mediaType: 'image/jpeg', url: 'https://example.com/cat.jpg' },
      { type: 'file', mediaType: 'text/plain', data: 'aMOpbGxv' },
      { type: 'text', text: 'Thanks.' },
    ]);
    expect(llm.requests[0]![0]!.parts).toEqual(stored.parts);
  });

  it('keeps a plain string a plain message (no parts stored)', async () => {
    const result = await run(agent, {
      store: durableMemoryStore(),
      sessionId: 'plain',
      llm: scriptedLlm([{ text: 'Hi.' }]),
      message: [{ type: 'text', text: 'Hello' }],
    });
    expect(result.messages[0]).not.toHaveProperty('parts');
    expect(result.messages[0]!.content).toBe('Hello');
  });

  it('refuses a bad part or a file over the store limit with a typed error before the model is called', async () => {
    const store = durableMemoryStore({ limits: { maxMessageBytes: 2_000, maxMessagesPerAppend: 10 } });
    const attempt = (message: unknown) =>
      run(agent, { store, sessionId: 'bad', llm: unreachableLlm(), message: message as never });
    await expect(attempt([])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'message' });
    await expect(attempt([{ type: 'file', mediaType: 'image/png', data: 42 }])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'message[0].data',
    });
    await expect(
      attempt([{ type: 'file', mediaType: 'image/png', data: 'a\u00e9b=' }]),
    ).rejects.toMatchObject({
      argument: 'message[0].data',
    });
    await expect(attempt([{ type: 'text', text: 'x', url: 'y' }])).rejects.toMatchObject({
      argument: 'message[0].url',
    });
    await expect(
      attempt([{ type: 'file', mediaType: 'application/pdf', data: new Uint8Array(4_000) }]),
    ).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      subject: 'message',
      limit: 2_000,
      part: expect.stringMatching(/^message\[0\] \(file application\/pdf, about \d+ bytes\)$/),
    });
    expect(await store.load('bad')).toBeNull();
  });
});
