import { expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, run } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// LlmResponse.parts says "`text` must be its text parts joined", but the loop never checks it:
// it stores the text of the parts as `content` and drops `text`. An adapter whose parts leave the
// answer out (an older or partial mapping) loses the model's answer without a word. The reply
// must either keep its text or be refused with InvalidModelReplyError naming the disagreement.

it('does not silently drop a reply text that its parts leave out', async () => {
  const llm: LlmAdapter = {
    async generate() {
      return {
        text: 'The answer is 42.',
        toolCalls: [],
        parts: [{ type: 'reasoning', text: 'Adding it up.' }],
      };
    },
  };
  const outcome = await run(defineAgent({ name: 'a', instructions: '' }), {
    store: durableMemoryStore(),
    sessionId: 'dropped',
    llm,
    message: 'What is six times seven?',
  }).then(
    (result) => result.response,
    (error: { code?: string }) => error.code,
  );
  expect(['The answer is 42.', 'INVALID_MODEL_REPLY']).toContain(outcome);
});
