import { type AgentDefinition, defineAgent, type LlmResponse, tool } from '@agentstore/core';
import type { LedgerCallInput } from './ledger.ts';

/** What the torture tools need to reach the ledger and say who they are. */
export interface ToolEnvironment {
  ledgerUrl: string;
  /** The lease epoch this worker holds (read when a handler runs). */
  epoch: () => number;
  /**
   * Runs first in every handler (the partition trial's slow downstream); when given, the handler
   * then honours `ctx.signal` right before its effect, as a well-behaved handler does.
   */
  beforeEffect?: (call: { toolCallId: string; signal: AbortSignal }) => Promise<void>;
}

/** Accepts any JSON input: the kit depends on no schema library. */
const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-torture',
    validate: (value: unknown) => ({ value }),
  },
};

async function callLedger(
  env: ToolEnvironment,
  tool: string,
  ctx: {
    sessionId: string | null;
    toolCallId: string;
    idempotencyKey: string;
    attempt: number;
    signal: AbortSignal;
  },
  dedupe: boolean,
): Promise<string> {
  if (env.beforeEffect) {
    await env.beforeEffect(ctx);
    ctx.signal.throwIfAborted();
  }
  const call: LedgerCallInput = {
    sessionId: ctx.sessionId ?? '',
    tool,
    toolCallId: ctx.toolCallId,
    idempotencyKey: ctx.idempotencyKey,
    pid: process.pid,
    attempt: ctx.attempt,
    epoch: env.epoch(),
  };
  // No abort signal on the request itself: a stalled worker must still deliver a side effect it
  // started, as a real one would, so the ledger sees what fencing does and does not prevent.
  const response = await fetch(`${env.ledgerUrl}/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(dedupe ? { 'x-dedupe': '1' } : {}) },
    body: JSON.stringify(call),
  });
  if (!response.ok) throw new Error(`ledger answered ${response.status}`);
  return ((await response.json()) as { effectId: string }).effectId;
}

/**
 * Three kinds of side effect, one per durability strategy: `notify` (no retry: must never run
 * twice for one call), `lookup` (`safeToRetry`), `charge` (`reconcile` + idempotency key).
 */
export function tortureAgent(env: ToolEnvironment): AgentDefinition {
  return defineAgent({
    name: 'torture',
    instructions: 'Exercise every durability strategy.',
    maxIterations: 10,
    tools: {
      notify: tool({
        description: 'Sends a notification (a side effect that cannot be checked or repeated)',
        input: anyInput,
        handler: async (_input, ctx) => ({ notified: await callLedger(env, 'notify', ctx, false) }),
      }),
      lookup: tool({
        description: 'Reads a value (safe to run again)',
        input: anyInput,
        safeToRetry: true,
        handler: async (_input, ctx) => ({ value: await callLedger(env, 'lookup', ctx, false) }),
      }),
      charge: tool({
        description: 'Charges a card through an idempotent API',
        input: anyInput,
        handler: async (_input, ctx) => ({ chargeId: await callLedger(env, 'charge', ctx, true) }),
        reconcile: async (_input, ctx) => {
          const query = new URLSearchParams({ sessionId: ctx.sessionId ?? '', key: ctx.idempotencyKey });
          const response = await fetch(`${env.ledgerUrl}/effect?${query}`);
          const { effectId } = (await response.json()) as { effectId: string | null };
          return effectId === null
            ? { happened: false as const }
            : { happened: true as const, output: { chargeId: effectId } };
        },
      }),
    },
  });
}

/**
 * The model's answers, by step: parallel and serial tool steps, with provider ids and without
 * (the loop then derives ids from the position), then a final answer.
 */
export const TORTURE_SCRIPT: Partial<LlmResponse>[] = [
  {
    text: 'step 1: charge, look up and notify at once',
    toolCalls: [
      { id: 'charge-1', name: 'charge', input: { cents: 500 } },
      { id: 'lookup-1', name: 'lookup', input: { key: 'a' } },
      { id: 'notify-1', name: 'notify', input: { to: 'ops' } },
    ],
  },
  { text: 'step 2: notify again', toolCalls: [{ name: 'notify', input: { to: 'user' } }] },
  {
    text: 'step 3: two lookups and a charge, no provider ids',
    toolCalls: [
      { name: 'lookup', input: { key: 'b' } },
      { name: 'lookup', input: { key: 'c' } },
      { name: 'charge', input: { cents: 700 } },
    ],
  },
  { text: 'step 4: one more lookup', toolCalls: [{ id: 'lookup-4', name: 'lookup', input: { key: 'd' } }] },
  { text: 'all done' },
];

export const TORTURE_FINAL_TEXT = 'all done';
/** The user message's stable id: a retried run never appends it twice. */
export const TORTURE_MESSAGE_ID = 'torture-user-message';
