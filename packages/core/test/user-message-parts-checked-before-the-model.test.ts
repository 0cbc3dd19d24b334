import { expect, it } from 'vitest';
import { defineAgent, run } from '../src/index.ts';
import { durableMemoryStore, unreachableLlm } from '../src/testing/index.ts';

// run() checks its own inputs before it calls the model: providerOptions on a user part that the
// store boundary refuses (not an object of objects) must be refused up front, not after a paid call.

const agent = defineAgent({ name: 'a', instructions: '' });

it.each([
  ['a provider entry that is an array', { anthropic: [1] }, 'message[0].providerOptions.anthropic'],
  ['a provider entry that is a string', { anthropic: 'ephemeral' }, 'message[0].providerOptions.anthropic'],
  ['providerOptions that are a string', 'ephemeral', 'message[0].providerOptions'],
])('refuses user providerOptions with %s before calling the model', async (_, providerOptions, argument) => {
  const store = durableMemoryStore();
  await expect(
    run(agent, {
      store,
      sessionId: 'opts',
      llm: unreachableLlm(),
      message: [{ type: 'text', text: 'hi', providerOptions: providerOptions as never }],
    }),
  ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument });
  expect(await store.load('opts')).toBeNull();
});

it('refuses user providerOptions nested deeper than the store takes before calling the model', async () => {
  // content-input measures depth from providerOptions; the store boundary from the message's
  // parts, two levels up: 62 and 63 levels pass run()'s check and fail write #1 after the call.
  let nested: unknown = 1;
  for (let i = 0; i < 62; i++) nested = { a: nested };
  const store = durableMemoryStore();
  await expect(
    run(agent, {
      store,
      sessionId: 'deep',
      llm: unreachableLlm(),
      message: [{ type: 'text', text: 'hi', providerOptions: { vendor: nested } as never }],
    }),
  ).rejects.toMatchObject({
    code: 'INVALID_ARGUMENT',
    argument: expect.stringMatching(/^message\[0\]\.providerOptions\.vendor/),
  });
  expect(await store.load('deep')).toBeNull();
});
