import { type AgentDefinition, defineAgent, type LlmAdapter, type LlmMessage, tool } from '@agentstore/core';

/**
 * The agent every golden session was written by. Its name and tool names are stored in the
 * sessions, so they must never change: a resumed session looks its tools up by these names.
 */
export const AGENT_NAME = 'golden-agent';

/** Accepts any JSON input: the corpus must not depend on a schema library's version. */
const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-golden',
    validate: (value: unknown) => ({ value }),
  },
};

/** Which handler ran, with what: a test checks that an interrupted call is not fired twice. */
export interface HandlerLog {
  calls: { tool: string; toolCallId: string; attempt: number; input: unknown }[];
}

export function goldenAgent(log: HandlerLog): AgentDefinition {
  const record = (name: string) => (input: unknown, ctx: { toolCallId: string; attempt: number }) => {
    log.calls.push({ tool: name, toolCallId: ctx.toolCallId, attempt: ctx.attempt, input });
  };
  return defineAgent({
    name: AGENT_NAME,
    instructions: 'You are the golden-corpus agent. Answer briefly.',
    tools: {
      // Side-effect free: re-invoked when a crash interrupted it.
      lookup: tool({
        description: 'Looks up the weather of a city.',
        input: anyInput,
        safeToRetry: true,
        handler: (input, ctx) => {
          record('lookup')(input, ctx);
          return { city: (input as { city: string }).city, forecast: 'sunny ☀', celsius: 21 };
        },
      }),
      add: tool({
        description: 'Adds two numbers.',
        input: anyInput,
        handler: (input, ctx) => {
          record('add')(input, ctx);
          const { a, b } = input as { a: number; b: number };
          return { sum: a + b };
        },
      }),
      // Waits for a human.
      send_email: tool({
        description: 'Sends an email.',
        input: anyInput,
        needsApproval: true,
        handler: (input, ctx) => {
          record('send_email')(input, ctx);
          return { sent: true, to: (input as { to: string }).to };
        },
      }),
      // A side effect with no reconcile: an interrupted call becomes a durability error.
      charge: tool({
        description: 'Charges a card.',
        input: anyInput,
        handler: (input, ctx) => {
          record('charge')(input, ctx);
          return { charged: (input as { cents: number }).cents };
        },
      }),
    },
  });
}

/** A model that always answers `text` with no tool call, and keeps every request it received. */
export function answeringLlm(text: string): LlmAdapter & { requests: LlmMessage[][] } {
  const requests: LlmMessage[][] = [];
  return {
    requests,
    async generate({ messages, signal }) {
      signal.throwIfAborted();
      requests.push(messages);
      return { text, toolCalls: [], usage: { inputTokens: 3, outputTokens: 2 } };
    },
  };
}
