import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentStore, defineAgent, type NewMessage, run, tool } from '../src/index.ts';
import { durableMemoryStore } from '../src/testing/index.ts';
import { loggedLlm } from './pipeline-fixtures.ts';

// A step's bookkeeping must not grow with the session: the loop reads the stored history once
// per run (fold, model view, tool-call ids), then only what the step itself adds. Counted, not timed.

const agent = defineAgent({
  name: 'step-cost',
  instructions: 'Work.',
  maxIterations: 50,
  tools: {
    work: tool({ description: 'work', input: z.object({ n: z.number() }), handler: ({ n }) => ({ n }) }),
  },
});

const at = () => new Date().toISOString();

/** A session of `turns` finished tool steps (4 messages each), appended through the contract. */
async function seed(store: AgentStore, sessionId: string, turns: number) {
  const batch: NewMessage[] = [];
  for (let i = 0; i < turns; i++) {
    const call = { id: `old-${i}`, name: 'work', input: { n: i } };
    batch.push(
      { id: `u${i}`, role: 'user', content: `turn ${i}`, createdAt: at() },
      { id: `a${i}`, role: 'assistant', content: '', toolCalls: [call], createdAt: at() },
      {
        id: `t${i}`,
        role: 'tool',
        content: `{"n":${i}}`,
        toolCallId: call.id,
        toolName: 'work',
        createdAt: at(),
      },
      { id: `f${i}`, role: 'assistant', content: `answer ${i}`, createdAt: at() },
    );
  }
  let head = 0;
  for (let i = 0; i < batch.length; i += 500) {
    const messages = batch.slice(i, i + 500);
    ({ headSeq: head } = await store.append(sessionId, {
      expectedSeq: head,
      messages,
      session: { init: { agentName: 'step-cost', ownerId: null, tenantId: null, state: null } },
      lease: null,
    }));
  }
}

/**
 * A store whose full loads hand out the history as an array that counts reads of its elements,
 * so the test sees how often the loop walks the stored messages.
 */
function countingStore(inner: AgentStore) {
  const counter = { reads: 0 };
  const store: AgentStore = {
    ...inner,
    load: async (id, options) => {
      const loaded = await inner.load(id, options);
      if (!loaded || options?.afterSeq !== undefined) return loaded;
      const messages = new Proxy(loaded.messages, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) counter.reads += 1;
          return Reflect.get(target, key, receiver);
        },
      });
      return { ...loaded, messages };
    },
  };
  return { store, counter };
}

const steps = (n: number) => [
  ...Array.from({ length: n }, (_, i) => ({ toolCalls: [{ name: 'work', input: { n: i } }] })),
  { text: 'done' },
];

/** History reads after the first model call of a run of `stepCount` steps on a session of `turns` turns. */
async function readsPerRun(turns: number, stepCount: number) {
  const inner = durableMemoryStore();
  await seed(inner, 's', turns);
  const { store, counter } = countingStore(inner);
  let atFirstCall = -1;
  // The model counts assistant messages to pick its step: offset by the seeded ones.
  const script = [...Array.from({ length: turns * 2 }, () => ({})), ...steps(stepCount)];
  const { llm } = loggedLlm(script, [], (call) => {
    if (call === 1) atFirstCall = counter.reads;
  });
  const result = await run(agent, { store, sessionId: 's', message: 'more', llm });
  expect(result.status).toBe('complete');
  expect(result.messages).toHaveLength(turns * 4 + 2 + stepCount * 2);
  return { setup: atFirstCall, steps: counter.reads - atFirstCall };
}

describe('per-step cost independent of history length', () => {
  it('walks the stored history once per run, never per step', async () => {
    const short = await readsPerRun(3, 8);
    const long = await readsPerRun(750, 8);
    // Setup is linear in the history (resume folds it once)…
    expect(long.setup).toBeGreaterThan(short.setup);
    // …the steps never read it again: what a step needs is kept incrementally (the loop before
    // this change re-read the whole history per model call: 364 reads here at 12 messages,
    // 51,160 at 3,000).
    expect(short.steps).toBe(0);
    expect(long.steps).toBe(0);
  });

  it('converts each message for the model once: requests share earlier elements and are never mutated later', async () => {
    const inner = durableMemoryStore();
    await seed(inner, 's', 5);
    const script = [...Array.from({ length: 10 }, () => ({})), ...steps(4)];
    const { llm, requests } = loggedLlm(script, []);
    await run(agent, { store: inner, sessionId: 's', message: 'more', llm });
    expect(requests).toHaveLength(5);
    const lengths = requests.map((r) => r.length);
    expect(lengths).toEqual([21, 23, 25, 27, 29]);
    for (let k = 1; k < requests.length; k++) {
      expect(requests[k]).not.toBe(requests[k - 1]);
      for (let j = 0; j < requests[k - 1]!.length - 1; j++) expect(requests[k]![j]).toBe(requests[k - 1]![j]);
    }
  });
});
