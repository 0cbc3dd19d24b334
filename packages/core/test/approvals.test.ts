import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ApprovalRequiredError,
  defineAgent,
  foldSession,
  InvalidApprovalError,
  loadSessionAt,
  run,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, scriptedLlm, unreachableLlm } from '../src/testing/index.ts';
import { sideEffectLedger } from './fixtures.ts';

function refundAgent(ledger: ReturnType<typeof sideEffectLedger>) {
  return defineAgent({
    name: 'refunds',
    instructions: 'Refund when asked.',
    tools: {
      refund: tool({
        description: 'Refunds money (needs a human above 100)',
        input: z.object({ cents: z.number() }),
        needsApproval: ({ cents }) => cents > 100,
        handler: ({ cents }, ctx) => {
          ledger.calls.push({
            tool: 'refund',
            toolCallId: ctx.toolCallId,
            idempotencyKey: ctx.idempotencyKey,
            attempt: ctx.attempt,
          });
          return { refunded: cents };
        },
      }),
      note: tool({
        description: 'Adds a note',
        input: z.object({ text: z.string() }),
        handler: ({ text }, ctx) => {
          ledger.calls.push({
            tool: 'note',
            toolCallId: ctx.toolCallId,
            idempotencyKey: ctx.idempotencyKey,
            attempt: ctx.attempt,
          });
          return { noted: text };
        },
      }),
    },
  });
}

const script = () =>
  scriptedLlm([
    {
      text: 'Refunding.',
      toolCalls: [
        { id: 'big', name: 'refund', input: { cents: 5000 } },
        { id: 'small', name: 'refund', input: { cents: 50 } },
        { id: 'n', name: 'note', input: { text: 'customer angry' } },
      ],
    },
    (messages) => ({
      text: `Done: ${messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' | ')}`,
    }),
  ]);

describe('human approvals', () => {
  it('pauses on a call that needs approval, runs the others, and resumes from another "process" with the decision', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const paused = await run(refundAgent(ledger), {
      store,
      sessionId: 'ap-1',
      message: 'refund me',
      llm: script(),
    });
    expect(paused.status).toBe('awaiting-approval');
    expect(paused.pendingApprovals).toEqual([
      { toolCallId: 'big', toolName: 'refund', input: { cents: 5000 } },
    ]);
    expect(ledger.calls.map((c) => c.toolCallId).sort()).toEqual(['n', 'small']);
    const stored = (await store.load('ap-1'))!;
    expect(stored.session.lease).toBeNull();
    expect(foldSession(stored.messages).status).toBe('awaiting-approval');

    // A new agent instance, ledger and model: nothing is carried in memory between the two runs.
    const later = sideEffectLedger();
    const done = await run(refundAgent(later), {
      store,
      sessionId: 'ap-1',
      llm: script(),
      approvals: { big: { approve: true } },
    });
    expect(done.status).toBe('complete');
    expect(later.calls).toEqual([expect.objectContaining({ toolCallId: 'big', attempt: 1 })]);
    expect(done.response).toContain('{"refunded":5000}');
    const decision = done.messages.find((m) => m.kind === 'approval-decided')!;
    expect(JSON.parse(decision.content)).toEqual({ toolCallId: 'big', approve: true });
  });

  it('gives the model a rejection result and never runs the rejected handler', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    await run(refundAgent(ledger), { store, sessionId: 'ap-2', message: 'refund me', llm: script() });
    const llm = script();
    const done = await run(refundAgent(ledger), {
      store,
      sessionId: 'ap-2',
      llm,
      approvals: { big: { approve: false, reason: 'over the limit' } },
    });
    expect(done.status).toBe('complete');
    expect(ledger.count('big')).toBe(0);
    const rejection = done.messages.find((m) => m.toolCallId === 'big')!;
    expect(rejection.kind).toBe('tool-approval-rejected');
    expect(JSON.parse(rejection.content)).toMatchObject({ reason: 'over the limit' });
    // Bookkeeping messages never reach the model; the rejection result does.
    const request = llm.requests.at(-1)!;
    expect(request.some((m) => m.role === 'system')).toBe(false);
    expect(request.find((m) => m.toolCallId === 'big')?.content).toContain('over the limit');
  });

  it('refuses to resume without deciding, deciding twice, or deciding an unknown call — and writes nothing', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    await run(refundAgent(ledger), { store, sessionId: 'ap-3', message: 'refund me', llm: script() });
    const head = (await store.load('ap-3'))!.session.headSeq;

    await expect(
      run(refundAgent(ledger), { store, sessionId: 'ap-3', llm: unreachableLlm() }),
    ).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
      toolCallIds: ['big'],
    });
    await expect(
      run(refundAgent(ledger), { store, sessionId: 'ap-3', message: 'hello?', llm: unreachableLlm() }),
    ).rejects.toBeInstanceOf(ApprovalRequiredError);
    const unknown = await run(refundAgent(ledger), {
      store,
      sessionId: 'ap-3',
      llm: unreachableLlm(),
      approvals: { big: { approve: true }, nope: { approve: true } },
    }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(InvalidApprovalError);
    expect(unknown).toMatchObject({ toolCallId: 'nope', reason: 'unknown-call' });
    expect((await store.load('ap-3'))!.session.headSeq).toBe(head);

    await run(refundAgent(ledger), {
      store,
      sessionId: 'ap-3',
      llm: script(),
      approvals: { big: { approve: true } },
    });
    const twice = await run(refundAgent(ledger), {
      store,
      sessionId: 'ap-3',
      llm: unreachableLlm(),
      approvals: { big: { approve: false } },
    }).catch((e: unknown) => e);
    expect(twice).toMatchObject({ code: 'INVALID_APPROVAL', reason: 'already-decided' });
    expect(ledger.count('big')).toBe(1);
  });
});

describe('replay and time travel', () => {
  it('replays a finished session with zero model calls and shows it as it was at any seq', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    await run(refundAgent(ledger), { store, sessionId: 'tt', message: 'refund me', llm: script() });
    await run(refundAgent(ledger), {
      store,
      sessionId: 'tt',
      llm: script(),
      approvals: { big: { approve: true } },
    });
    const replay = await run(refundAgent(ledger), { store, sessionId: 'tt', llm: unreachableLlm() });
    expect(replay.status).toBe('complete');
    expect(replay.usage).toEqual({ inputTokens: 0, outputTokens: 0 });

    const atWrite1 = (await loadSessionAt(store, 'tt', 3))!;
    expect(atWrite1.session.headSeq).toBe(3);
    expect(atWrite1.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'system']);
    const folded = foldSession(atWrite1.messages);
    // As of write #1: the big refund waits for a human, the other two calls had not answered yet.
    expect(folded.status).toBe('awaiting-approval');
    expect(folded.awaitingApproval.map((c) => c.id)).toEqual(['big']);
    expect(folded.interruptedCalls.map((c) => c.id)).toEqual(['small', 'n']);
    expect(folded.toolCalls.map((t) => t.call.id)).toEqual(['big', 'small', 'n']);
    const final = foldSession((await store.load('tt'))!.messages);
    expect(final.status).toBe('complete');
    expect(final.toolCalls.every((t) => t.result !== null)).toBe(true);
  });
});
