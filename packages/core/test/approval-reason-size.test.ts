import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentStore, defineAgent, isAgentStoreError, run, tool } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm, unreachableLlm } from '../src/testing/index.ts';

/*
 * Attack on deliverable 2 ("run() checks all of its own inputs — approvals included — before
 * acquiring the lease"): a rejection reason is copied into the decision record and the rejection
 * result, but its size is only found out when the decision append is refused, after the lease was
 * taken. Nothing is written and a shorter reason works, so the session is not lost; the check is
 * merely late.
 */

describe('a rejection reason larger than the store takes', () => {
  it('is refused before acquireLease, with a typed error; a shorter reason then completes', async () => {
    const inner = durableMemoryStore({ limits: { maxMessageBytes: 262_144 } });
    const agent = defineAgent({
      name: 'attack',
      instructions: 'x',
      tools: {
        wire: tool({ description: 'w', input: z.object({}), needsApproval: true, handler: () => 'sent' }),
      },
    });
    const asked = await run(agent, {
      store: inner,
      sessionId: 's',
      message: 'go',
      llm: scriptedLlm([{ toolCalls: [{ name: 'wire', input: {} }] }]),
    });
    const callId = asked.pendingApprovals[0]!.toolCallId;
    let acquires = 0;
    const store: AgentStore = {
      ...inner,
      acquireLease: (...args) => {
        acquires++;
        return inner.acquireLease(...args);
      },
    };
    const before = (await inner.load('s'))!.session.headSeq;
    let refused: unknown = null;
    try {
      await run(agent, {
        store,
        sessionId: 's',
        llm: unreachableLlm(),
        approvals: { [callId]: { approve: false, reason: 'r'.repeat(300_000) } },
      });
    } catch (error) {
      refused = error;
    }
    expect(
      isAgentStoreError(refused, 'INVALID_ARGUMENT') || isAgentStoreError(refused, 'PAYLOAD_TOO_LARGE'),
    ).toBe(true);
    expect((await inner.load('s'))!.session.headSeq, 'nothing written').toBe(before);
    expect(acquires, 'acquireLease calls for an approval that could never be stored').toBe(0);
    const done = await run(agent, {
      store: inner,
      sessionId: 's',
      llm: scriptedLlm([{ toolCalls: [{ name: 'wire', input: {} }] }, { text: 'ok' }]),
      approvals: { [callId]: { approve: false, reason: 'no' } },
    });
    expect(done.status).toBe('complete');
  });
});
