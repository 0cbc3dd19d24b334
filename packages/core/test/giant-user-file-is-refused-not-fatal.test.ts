import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

// run({ message }) encodes bytes with btoa before it checks the size. Past V8's longest string
// (2^29 - 24 characters), Node's btoa aborts the whole process (FATAL ERROR: v8::ToLocalChecked
// Empty MaybeLocal, SIGABRT) instead of throwing: a 420 MB upload kills the server. The size a
// file will have as base64 is known from its byte length, so it can be refused with
// PayloadTooLargeError before anything is encoded. (Run in a child: the abort cannot be caught.)

const script = `
import { defineAgent, run } from ${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)};
import { durableMemoryStore, unreachableLlm } from ${JSON.stringify(new URL('../src/testing/index.ts', import.meta.url).href)};
const store = durableMemoryStore({ limits: { maxMessageBytes: 16 * 1024 * 1024, maxMessagesPerAppend: 10 } });
try {
  await run(defineAgent({ name: 'a', instructions: '' }), {
    store, sessionId: 'giant', llm: unreachableLlm(),
    message: [{ type: 'file', mediaType: 'video/mp4', data: new Uint8Array(420 * 1024 * 1024) }],
  });
  console.log('resolved');
} catch (error) {
  console.log('rejected ' + error?.code);
}
`;

it('refuses a 420 MB user file with PAYLOAD_TOO_LARGE instead of aborting the process', () => {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 170_000,
  });
  expect(child.stderr).not.toMatch(/FATAL ERROR/);
  expect(child.signal).toBeNull();
  expect(child.stdout.trim()).toBe('rejected PAYLOAD_TOO_LARGE');
}, 180_000);
