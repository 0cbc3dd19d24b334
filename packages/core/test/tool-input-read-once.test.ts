import { describe, expect, it } from 'vitest';
import { defineAgent, foldSession, type LlmAdapter, type LlmResponse, run, tool } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';

// A model adapter hands back tool-call inputs as live objects: a getter or a Proxy may answer
// differently on each read. The input is read once; the store, the model's view and the handler
// all get that one reading.

/** A schema that passes its value through unchanged (like z.any()). */
const anyInput = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

function recordingAgent() {
  const ran: unknown[] = [];
  const agent = defineAgent({
    name: 'reads',
    instructions: '',
    tools: {
      work: tool({
        description: 'records its input',
        input: anyInput,
        handler: (input) => {
          ran.push(structuredClone(input));
          return 'ok';
        },
      }),
    },
  });
  return { agent, ran };
}

/** One call with `input`, then a final answer. */
function callingWith(input: unknown): LlmAdapter {
  let calls = 0;
  return {
    async generate() {
      calls += 1;
      return (calls === 1
        ? { text: '', toolCalls: [{ id: 'c1', name: 'work', input }] }
        : { text: 'done', toolCalls: [] }) as unknown as LlmResponse;
    },
  };
}

describe('a tool call input is read once', () => {
  it('a getter answering differently on each read: the handler gets exactly what was stored', async () => {
    const { agent, ran } = recordingAgent();
    const store = durableMemoryStore();
    let reads = 0;
    const input = {
      get amount() {
        reads += 1;
        return reads;
      },
    };
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm: callingWith(input) });
    expect(result.status).toBe('complete');
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.call.input).toEqual({ amount: 1 });
    expect(ran).toEqual([{ amount: 1 }]);
    expect(reads).toBe(1);
  });

  it('a Proxy that throws on its second read: the call runs once with the stored input, the run completes', async () => {
    const { agent, ran } = recordingAgent();
    const store = durableMemoryStore();
    let reads = 0;
    const input = new Proxy(
      { a: 1 },
      {
        get(target, key, receiver) {
          if (key === 'a' && ++reads > 1) throw new Error('gone');
          return Reflect.get(target, key, receiver);
        },
      },
    );
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm: callingWith(input) });
    expect(result.status).toBe('complete');
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.call.input).toEqual({ a: 1 });
    expect(ran).toEqual([{ a: 1 }]);
  });

  it('an input that cannot be read at all is a broken call (tool-input-error), never a raw error', async () => {
    const { agent, ran } = recordingAgent();
    const store = durableMemoryStore({ limits: { maxMessageBytes: 64 * 1024 } });
    const input = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('revoked');
        },
      },
    );
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm: callingWith(input) });
    expect(result.status).toBe('complete');
    const [call] = foldSession((await store.load('s'))!.messages).toolCalls;
    expect(call!.call.input).toBeNull();
    expect(call!.result?.kind).toBe('tool-input-error');
    expect(JSON.parse(call!.result!.content).error).toMatch(/could not be read \(revoked\)/);
    expect(ran).toEqual([]);
  });
});
