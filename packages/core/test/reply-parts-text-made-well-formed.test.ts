import { expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, run } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// model-step: "a lone surrogate in the text becomes U+FFFD (what a UTF-8 store makes of it
// anyway)", and readReplyParts: "Text is made well-formed as the reply's text is". An adapter
// that returns parts (as @agentstore/ai-sdk always does) must get the same treatment as one that
// returns only `text`: the paid reply is stored, not refused.

it('stores a reply whose text part holds a lone surrogate with U+FFFD, as it does for text alone', async () => {
  const llm: LlmAdapter = {
    async generate() {
      return { text: 'cut \ud83d', toolCalls: [], parts: [{ type: 'text', text: 'cut \ud83d' }] };
    },
  };
  const result = await run(defineAgent({ name: 'a', instructions: '' }), {
    store: durableMemoryStore(),
    sessionId: 'surrogate',
    llm,
    message: 'hi',
  });
  expect(result.status).toBe('complete');
  expect(result.messages.at(-1)?.content).toBe('cut \ufffd');
});

it('stores a reasoning part holding a lone surrogate with U+FFFD', async () => {
  const llm: LlmAdapter = {
    async generate() {
      return {
        text: 'ok',
        toolCalls: [],
        parts: [
          { type: 'reasoning', text: 'think \udc00' },
          { type: 'text', text: 'ok' },
        ],
      };
    },
  };
  const result = await run(defineAgent({ name: 'a', instructions: '' }), {
    store: durableMemoryStore(),
    sessionId: 'surrogate-reasoning',
    llm,
    message: 'hi',
  });
  expect(result.status).toBe('complete');
  expect(result.messages.at(-1)?.parts?.[0]).toEqual({ type: 'reasoning', text: 'think \ufffd' });
});
