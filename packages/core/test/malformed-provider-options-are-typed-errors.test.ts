import { describe, expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, type NewMessage, run } from '../src/index.ts';
import { validateAppendInput } from '../src/store/validation.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// A null where an object belongs (a provider's entry in providerOptions, a source) must be the
// boundary's typed error naming the path, like any other malformed part: never a bare TypeError.

const limits = { maxMessageBytes: 1024 * 1024, maxMessagesPerAppend: 10 };
const append = (parts: unknown) =>
  validateAppendInput(
    's',
    {
      expectedSeq: 0,
      messages: [
        { id: 'm', role: 'assistant', content: '', createdAt: '2026-01-01T00:00:00Z', parts } as NewMessage,
      ],
      lease: null,
    },
    limits,
  );

describe('the store boundary names a null where a part needs an object', () => {
  it("refuses a provider's null entry in providerOptions with INVALID_ARGUMENT naming it", () => {
    expect(() => append([{ type: 'text', text: 'a', providerOptions: { google: null } }])).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        argument: 'messages[0].parts[0].providerOptions.google',
      }),
    );
  });

  it('refuses a null source with INVALID_ARGUMENT naming it', () => {
    expect(() => append([{ type: 'source', source: null }])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'messages[0].parts[0].source' }),
    );
  });
});

describe('a model reply whose part carries a null where an object belongs', () => {
  const agent = defineAgent({ name: 'a', instructions: '' });
  const replying = (parts: unknown): LlmAdapter => ({
    async generate() {
      return { text: 'a', toolCalls: [], parts: parts as never };
    },
  });

  it.each([
    ['a null provider entry', [{ type: 'text', text: 'a', providerOptions: { google: null } }]],
    [
      'a null source',
      [
        { type: 'text', text: 'a' },
        { type: 'source', source: null },
      ],
    ],
  ])('is an InvalidModelReplyError (%s)', async (_, parts) => {
    await expect(
      run(agent, { store: durableMemoryStore(), sessionId: 's', llm: replying(parts), message: 'hi' }),
    ).rejects.toMatchObject({ code: 'INVALID_MODEL_REPLY' });
  });
});
