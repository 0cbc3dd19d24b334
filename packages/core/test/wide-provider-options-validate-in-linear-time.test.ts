import { expect, it } from 'vitest';
import type { NewMessage } from '../src/index.ts';
import { validateAppendInput } from '../src/store/validation.ts';

// The boundary checks a provider's entry in providerOptions (and a source) with validateObject,
// passing the object's own keys as the allowed fields: `fields.includes(key)` for every key is
// quadratic. Measured here: 20,000 keys 0.35 s, 40,000 0.9 s, 80,000 (1.1 MB) 3.3 s, while the
// same keys one level deeper take 36 ms. A message at SQLite's 16 MiB limit would block the event
// loop (and the lease keeper) for many minutes, twice per append (model step, then the store).
// 200,000 keys (2.6 MB, within SQLite's limit) take ~20 s quadratic and ~0.6 s
// linear: the timeout below is over 15x the linear cost, not a speed budget.

const limits = { maxMessageBytes: 16 * 1024 * 1024, maxMessagesPerAppend: 10 };
const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));

it('validates a provider entry of 200,000 keys within the store limit in linear time', () => {
  const message = {
    id: 'm',
    role: 'assistant',
    content: 'a',
    createdAt: '2026-01-01T00:00:00Z',
    parts: [{ type: 'text', text: 'a', providerOptions: { vendor: wide } }],
  } as NewMessage;
  expect(() =>
    validateAppendInput('s', { expectedSeq: 0, messages: [message], lease: null }, limits),
  ).not.toThrow();
}, 60_000);
