import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, foldSession, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack: a tool name is model output, stored verbatim and bounded only by maxMessageBytes. A
 * call to an unknown tool whose name is over half the limit fits in the assistant message
 * (write #1), but its result — which repeats the name in its text and in `toolName` — never
 * fits: not as "Unknown tool", not as the tool-output-error that replaces an oversized result
 * (tool-results.ts `unstored` repeats the name too), and not as the durability error of a resumed
 * run. Every run and every resume throws PAYLOAD_TOO_LARGE: the session is bricked.
 */

const LIMIT = 262_144;
const giantName = 'n'.repeat(Math.ceil(LIMIT * 0.55));

const agent = defineAgent({
  name: 'attack',
  instructions: 'x',
  tools: { real: tool({ description: 'r', input: z.object({}), handler: () => 'ok' }) },
});

describe('an unknown tool with a giant name', () => {
  it('the call gets a stored result and the run completes', async () => {
    const store = durableMemoryStore({ limits: { maxMessageBytes: LIMIT } });
    const llm = scriptedLlm([{ toolCalls: [{ name: giantName, input: {} }] }, { text: 'done' }]);
    const result = await run(agent, { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    const loaded = await store.load('s');
    expect(foldSession(loaded!.messages).toolCalls.map((t) => t.result?.kind)).toHaveLength(1);
    expect(foldSession(loaded!.messages).toolCalls.every((t) => t.result !== null)).toBe(true);
  });

  it('a resume after a failed first run settles the call and completes (was: every resume failed the same way)', async () => {
    const store = durableMemoryStore({ limits: { maxMessageBytes: LIMIT } });
    const llm = scriptedLlm([{ toolCalls: [{ name: giantName, input: {} }] }, { text: 'done' }]);
    await run(agent, { store, sessionId: 's', message: 'go', llm }).catch(() => undefined);
    // Write #1 landed, so the call is open; the resume must settle it (a durability error at worst).
    const resumed = await run(agent, { store, sessionId: 's', llm });
    expect(resumed.status, 'resuming the session').toBe('complete');
  });
});
