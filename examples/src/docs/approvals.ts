// examples/src/docs/approvals.ts
import { type AgentStore, defineAgent, type LlmAdapter, run, tool } from '@agentstore/core';
import { z } from 'zod';

const agent = defineAgent({
  name: 'refunds',
  instructions: 'Handle refund requests.',
  tools: {
    refund: tool({
      description: 'Refunds an order',
      input: z.object({ orderId: z.string(), cents: z.number() }),
      needsApproval: ({ cents }) => cents > 10_000, // a human signs off on large refunds
      handler: async ({ orderId, cents }) => ({ orderId, refunded: cents }),
    }),
  },
});

export async function requestRefund(store: AgentStore, llm: LlmAdapter, sessionId: string) {
  const result = await run(agent, { store, llm, sessionId, message: 'Refund order 9 in full' });
  // status 'awaiting-approval': the process may exit now; the calls are stored.
  return result.pendingApprovals; // [{ toolCallId, toolName, input }]
}

export async function decide(
  store: AgentStore,
  llm: LlmAdapter,
  sessionId: string,
  toolCallId: string,
  ok: boolean,
) {
  // Any process, any time later.
  return run(agent, {
    store,
    llm,
    sessionId,
    approvals: {
      [toolCallId]: ok ? { approve: true } : { approve: false, reason: 'Policy: partial refunds only' },
    },
  });
}
