import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type LlmAdapter, run, tool } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// docs/messages.md: "A toModelOutput that throws or returns something else records a
// tool-output-error result (the handler did run; only its display failed)". Parts that
// readContentParts accepts but the store boundary refuses (providerOptions 62 levels deep: depth
// is counted from providerOptions there and from the parts at the store; a provider entry that is
// null) fail write #2 instead: the run throws after the side effect, and the resume records a
// tool-durability-error ("may or may not have taken effect") for a call that ran and returned.

let nested: unknown = 1;
for (let i = 0; i < 62; i++) nested = { a: nested };

it.each([
  ['nested deeper than the store takes', { vendor: nested }],
  ['with a null provider entry', { vendor: null }],
])(
  'records a tool-output-error when toModelOutput returns providerOptions %s',
  async (_, providerOptions) => {
    let effects = 0;
    const agent = defineAgent({
      name: 'a',
      instructions: '',
      tools: {
        charge: tool({
          description: 'Charges a card',
          input: z.object({}),
          handler: () => {
            effects += 1;
            return 'charged';
          },
          toModelOutput: () => [
            { type: 'text', text: 'Charged.', providerOptions: providerOptions as never },
          ],
        }),
      },
    });
    let calls = 0;
    const llm: LlmAdapter = {
      async generate() {
        calls += 1;
        return calls === 1
          ? { text: '', toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }
          : { text: 'Done.', toolCalls: [] };
      },
    };
    const result = await run(agent, {
      store: durableMemoryStore(),
      sessionId: 'charge',
      llm,
      message: 'Pay',
    });
    expect(result.status).toBe('complete');
    expect(effects).toBe(1);
    expect(result.messages.find((m) => m.role === 'tool')?.kind).toBe('tool-output-error');
  },
);
