import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack on deliverable 4 through the tool's `output` schema: the schema runs after the effect
 * and may transform a valid output into something that is not JSON (a Date, a BigInt, a class
 * instance, an object hiding a toJSON). Whatever it produces, the call must end with one stored
 * result, the run must go on, and the handler must have run once.
 */

class Receipt {
  readonly id: number;
  constructor(id: number) {
    this.id = id;
  }
}

const TRANSFORMS: [string, (o: { id: number }) => unknown][] = [
  ['a Date', () => new Date(0)],
  ['a BigInt', (o) => BigInt(o.id)],
  ['a class instance', (o) => new Receipt(o.id)],
  [
    'an object hiding a toJSON that returns undefined',
    (o) => Object.defineProperty({ ...o }, 'toJSON', { value: () => undefined }),
  ],
  ['a function', () => () => 1],
];

describe('output schemas that transform into non-JSON', () => {
  for (const [what, transform] of TRANSFORMS) {
    it(`${what}: one stored tool-output-error, the run completes, the handler ran once`, async () => {
      let ran = 0;
      const agent = defineAgent({
        name: 'attack',
        instructions: 'x',
        tools: {
          pay: tool({
            description: 'pays',
            input: z.object({}),
            output: z.object({ id: z.number() }).transform(transform) as never,
            handler: () => {
              ran++;
              return { id: 7 } as never;
            },
          }),
        },
      });
      const store = durableMemoryStore();
      const llm = scriptedLlm([{ toolCalls: [{ name: 'pay', input: {} }] }, { text: 'done' }]);
      const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
      expect(result.status).toBe('complete');
      expect(ran).toBe(1);
      const loaded = await store.load('s');
      const calls = foldSession(loaded!.messages).toolCalls;
      expect(calls.map((c) => c.result?.kind)).toEqual(['tool-output-error']);
    });
  }
});
