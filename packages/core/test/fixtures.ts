import { z } from 'zod';
import { type AgentStore, defineAgent, type RunOptions, run, SessionBusyError, tool } from '../src/index.ts';

/** Records every handler invocation, like the outside world would. */
export function sideEffectLedger() {
  const calls: { tool: string; toolCallId: string; idempotencyKey: string; attempt: number }[] = [];
  return {
    calls,
    count: (toolCallId: string) => calls.filter((c) => c.toolCallId === toolCallId).length,
  };
}

export type Ledger = ReturnType<typeof sideEffectLedger>;

/** An agent with a side-effecting tool, a safe-to-retry lookup and a reconcilable charge. */
export function triageAgent(ledger: Ledger) {
  return defineAgent({
    name: 'triage',
    instructions: 'Triage the ticket.',
    tools: {
      postSlack: tool({
        description: 'Posts to Slack (side effect, not safe to retry)',
        input: z.object({ text: z.string() }),
        handler: async ({ text }, ctx) => {
          ledger.calls.push({ tool: 'postSlack', ...pick(ctx) });
          return { posted: text };
        },
      }),
      lookup: tool({
        description: 'Reads a customer record',
        input: z.object({ customer: z.string() }),
        safeToRetry: true,
        handler: async ({ customer }, ctx) => {
          ledger.calls.push({ tool: 'lookup', ...pick(ctx) });
          return { customer, plan: 'pro' };
        },
      }),
      charge: tool({
        description: 'Charges a card (side effect, reconcilable by idempotency key)',
        input: z.object({ cents: z.number() }),
        handler: async ({ cents }, ctx) => {
          ledger.calls.push({ tool: 'charge', ...pick(ctx) });
          return { charged: cents, key: ctx.idempotencyKey };
        },
        reconcile: async ({ cents }, ctx) => {
          const done = ledger.calls.some(
            (c) => c.tool === 'charge' && c.idempotencyKey === ctx.idempotencyKey,
          );
          return done
            ? { happened: true, output: { charged: cents, key: ctx.idempotencyKey } }
            : { happened: false };
        },
      }),
    },
  });
}

function pick(ctx: { toolCallId: string; idempotencyKey: string; attempt: number }) {
  return { toolCallId: ctx.toolCallId, idempotencyKey: ctx.idempotencyKey, attempt: ctx.attempt };
}

/** Resumes a session until it completes, waiting out the lease a crashed run left behind. */
export async function resumeUntilComplete(
  agent: ReturnType<typeof defineAgent>,
  options: RunOptions & { store: AgentStore },
) {
  // The crashed run's short lease is waited out; the resuming run gets one a loaded machine
  // cannot outrun (its lease's local deadline would abort it).
  const resume = { ...options, leaseTtlMs: Math.max(options.leaseTtlMs ?? 0, 5_000) };
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      return await run(agent, resume);
    } catch (error) {
      if (!(error instanceof SessionBusyError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs + 5));
    }
  }
  throw new Error('session stayed busy');
}
