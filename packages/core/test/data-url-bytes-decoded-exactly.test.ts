import { expect, it } from 'vitest';
import { defineAgent, type LlmAdapter, run } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// A data: URL without ;base64 carries bytes percent-encoded (RFC 2397): `%FF` is the byte 0xFF.
// content-input decodes the body with decodeURIComponent, which only takes UTF-8 sequences, so a
// valid data: URL holding binary bytes is refused as "a data: URL that is not percent-encoded".

it('stores the exact bytes of a percent-encoded data: URL, binary bytes included', async () => {
  const llm: LlmAdapter = {
    async generate() {
      return { text: 'ok', toolCalls: [] };
    },
  };
  const result = await run(defineAgent({ name: 'a', instructions: '' }), {
    store: durableMemoryStore(),
    sessionId: 'data-url',
    llm,
    message: [
      {
        type: 'file',
        mediaType: 'application/octet-stream',
        data: 'data:application/octet-stream,%00%FF%80a',
      },
    ],
  });
  expect(result.messages[0]?.parts?.[0]).toEqual({
    type: 'file',
    mediaType: 'application/octet-stream',
    data: Buffer.from([0x00, 0xff, 0x80, 0x61]).toString('base64'),
  });
});
