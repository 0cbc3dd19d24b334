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

describe('provider tool-call ids the store cannot hold', () => {
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

describe('usage figures that are not JSON numbers', () => {
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

describe('tool names that Object.prototype has', () => {
  it('a call to constructor, __proto__, toString or hasOwnProperty is an unknown tool, and the run goes on', async () => {
    const { agent, ran } = agentWithLedger();
    const store = durableMemoryStore();
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
    const llm = scriptedLlm([
      { toolCalls: [...names.map((name) => ({ name, input: {} })), { name: 'work', input: {} }] },
      { text: 'done' },
    ]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    const results = foldSession((await store.load('s'))!.messages).toolCalls.map((t) => t.result!);
    expect(results.map((r) => [r.toolName, r.kind, r.content])).toEqual([
      ...names.map((name) => [
        name,
        'tool-error',
        JSON.stringify({ error: `Unknown tool ${JSON.stringify(name)}` }),
      ]),
      ['work', undefined, '"ok"'],
    ]);
    expect(ran).toHaveLength(1);
  });
});

describe('a schema that throws an error whose message cannot be read', () => {
  it('the call is answered as a tool-input-error, its neighbour runs, and the run completes', async () => {
    const { agent: base, ran } = agentWithLedger();
    const unreadable = () => {
      const error = new Error('hidden');
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('message getter');
        },
      });
      return error;
    };
    const agent = defineAgent({
      ...base,
      tools: {
        ...base.tools,
        evil: tool({
          description: 'e',
          input: {
            '~standard': {
              version: 1 as const,
              vendor: 'attack',
              validate: () => {
                throw unreadable();
              },
            },
          },
          handler: () => 'never',
        }),
      },
    });
    const store = durableMemoryStore();
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'evil', input: {} },
          { name: 'work', input: {} },
        ],
      },
      { text: 'done' },
    ]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    const results = foldSession((await store.load('s'))!.messages).toolCalls.map((t) => t.result!);
    expect(results.map((r) => [r.toolName, r.kind])).toEqual([
      ['evil', 'tool-input-error'],
      ['work', undefined],
    ]);
    expect(results[0]!.content).toContain('an error whose message could not be read');
    expect(ran).toHaveLength(1);
  });
});
