import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, type LlmResponse, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack: what the model answers is input too. A provider tool-call id or usage figure that the
 * store boundary refuses makes write #1 fail after every paid model call, on every resume, so
 * the session can never move past that step. The loop must normalise what it does not control.
 */

function agentWithLedger() {
  const ran: string[] = [];
  const agent = defineAgent({
    name: 'attack',
    instructions: 'x',
    tools: {
      work: tool({
        description: 'w',
        input: z.object({}),
        handler: (_input, ctx) => {
          ran.push(ctx.toolCallId);
          return 'ok';
        },
      }),
    },
  });
  return { agent, ran };
}

const UNSTORABLE_IDS: [string, string][] = [
  ['300 bytes long (over the 256-byte id limit)', `call_${'x'.repeat(295)}`],
  ['holding a NUL', 'call_\u0000'],
  ['holding a lone surrogate', 'call_\uD800'],
];

describe('attack: provider tool-call ids the store cannot hold', () => {
  for (const [what, id] of UNSTORABLE_IDS) {
    it(`an id ${what}: the run completes, the call runs once and is stored under a storable id`, async () => {
      const { agent, ran } = agentWithLedger();
      const store = durableMemoryStore();
      const first: Partial<LlmResponse> = { toolCalls: [{ id, name: 'work', input: {} }] };
      const llm = scriptedLlm([first, { text: 'done' }]);
      const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
      expect(result.status).toBe('complete');
      expect(ran).toHaveLength(1);
      const loaded = await store.load('s');
      expect(foldSession(loaded!.messages).toolCalls.map((t) => t.result !== null)).toEqual([true]);
    });
  }
});

describe('attack: usage figures that are not JSON numbers', () => {
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
    it(`usage.inputTokens ${bad}: the paid step is still committed and the stored state stays JSON`, async () => {
      const { agent, ran } = agentWithLedger();
      const store = durableMemoryStore();
      const usage = { inputTokens: bad, outputTokens: 1 };
      const llm = scriptedLlm([
        { toolCalls: [{ name: 'work', input: {} }], usage },
        { text: 'done', usage },
      ]);
      // Today: INVALID_ARGUMENT "session.state.usage.inputTokens: NaN is not JSON" from write #1,
      // after the model was paid, on this run and every resume with the same model.
      const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
      expect(result.status).toBe('complete');
      expect(ran).toHaveLength(1);
      const loaded = await store.load('s');
      expect(JSON.parse(JSON.stringify(loaded!.session.state))).toEqual(loaded!.session.state);
    });
  }
});
