import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type BackgroundErrorContext,
  defineAgent,
  foldSession,
  run,
  SeqConflictError,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';
import { drainEventLoop, gatedStore } from './pipeline-fixtures.ts';

// The caller's abort never withholds the result of a handler that finished: run() rejects with
// the abort reason without waiting for the store, but each such result is still sent, in order,
// and the lease is freed only after them. A failure of those appends goes to onBackgroundError.

function twoCalls() {
  let finishSlow!: () => void;
  const slowGate = new Promise<void>((resolve) => {
    finishSlow = resolve;
  });
  const effects: string[] = [];
  const agent = defineAgent({
    name: 'abort',
    instructions: '',
    tools: {
      fast: tool({
        description: 'fast effect',
        input: z.object({}),
        handler: () => {
          effects.push('fast');
          return 'fast done';
        },
      }),
      slow: tool({
        description: 'slow effect that ignores the signal once started',
        input: z.object({}),
        handler: async () => {
          await slowGate;
          effects.push('slow');
          return 'slow done';
        },
      }),
    },
  });
  const llm = scriptedLlm([
    {
      toolCalls: [
        { id: 'c1', name: 'fast', input: {} },
        { id: 'c2', name: 'slow', input: {} },
      ],
    },
    { text: 'done' },
  ]);
  return { agent, llm, effects, finishSlow };
}

describe("the caller's abort while a finished handler's result is being committed", () => {
  it('run() rejects with the abort reason, and both results still land, in order; the lease is then freed', async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    // Append 1 is write #1; append 2 carries fast's result and is slow to answer (a remote store).
    const held = gated.hold(2);
    const { agent, llm, effects, finishSlow } = twoCalls();
    const controller = new AbortController();
    const reported: BackgroundErrorContext[] = [];
    const running = run(agent, {
      store: gated.store,
      sessionId: 's',
      message: 'go',
      llm,
      signal: controller.signal,
      onBackgroundError: (_error, context) => reported.push(context),
    }).catch((error: unknown) => error);
    await held.reached;
    const reason = new Error('caller gave up');
    controller.abort(reason);
    // slow's effect happens after the abort.
    finishSlow();
    expect(await running).toBe(reason);
    held.open();
    await drainEventLoop();
    const stored = (await inner.load('s'))!;
    expect(stored.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content])).toEqual([
      ['c1', '"fast done"'],
      ['c2', '"slow done"'],
    ]);
    expect(stored.session.lease, 'freed after the results landed').toBeNull();
    expect(reported).toEqual([]);
    // The next run finds nothing open: no call is recorded as possibly lost.
    const next = await run(agent, { store: inner, sessionId: 's', llm });
    expect(next.status).toBe('complete');
    expect(next.messages.some((m) => m.kind === 'tool-durability-error')).toBe(false);
    expect(effects).toEqual(['fast', 'slow']);
    expect(foldSession(next.messages).status).toBe('complete');
  });

  it('a failure of those appends goes to onBackgroundError, not nowhere', async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    const held = gated.hold(2);
    const { agent, llm, finishSlow } = twoCalls();
    const controller = new AbortController();
    const reported: { error: unknown; context: BackgroundErrorContext }[] = [];
    const running = run(agent, {
      store: gated.store,
      sessionId: 's',
      message: 'go',
      llm,
      signal: controller.signal,
      onBackgroundError: (error, context) => reported.push({ error, context }),
    }).catch((error: unknown) => error);
    await held.reached;
    const reason = new Error('caller gave up');
    controller.abort(reason);
    finishSlow();
    expect(await running).toBe(reason);
    const refused = new SeqConflictError({ sessionId: 's', expectedSeq: 2, actualSeq: 3 });
    held.fail(refused);
    await drainEventLoop();
    expect(reported).toEqual([
      { error: refused, context: { operation: 'append', sessionId: 's', after: 'abandoned-run' } },
    ]);
  });
});
