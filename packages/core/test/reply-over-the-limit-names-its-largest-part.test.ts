import { expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, run } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// A reply too big for the store because of its parts (8 KB of encrypted reasoning, 2 bytes of
// text) is refused as "text makes the assistant message 8249 bytes (the text alone is 2)", with
// field 'text': the error blames the one field that is not the cause. A user message over the
// limit names its largest part (largestPart); a reply should too.

it('names the reasoning part, not the text, when a reply is over the store limit because of it', async () => {
  const llm: LlmAdapter = {
    async generate() {
      return {
        text: 'hi',
        toolCalls: [],
        parts: [
          {
            type: 'reasoning',
            text: '',
            providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'QUJD'.repeat(2_000) } },
          },
          { type: 'text', text: 'hi' },
        ],
      };
    },
  };
  const error = await run(defineAgent({ name: 'a', instructions: '' }), {
    store: durableMemoryStore({ limits: { maxMessageBytes: 6_000, maxMessagesPerAppend: 10 } }),
    sessionId: 'big-reasoning',
    llm,
    message: 'hi',
  }).catch((e: unknown) => e as { code?: string; field?: string; message: string });
  expect(error).toMatchObject({ code: 'INVALID_MODEL_REPLY' });
  expect((error as { field?: string }).field).not.toBe('text');
  expect((error as Error).message).toMatch(/parts\[0\] \(reasoning/);
});
