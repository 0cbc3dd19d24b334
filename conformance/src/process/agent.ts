import { type AgentDefinition, defineAgent, type JsonValue, tool } from '@agentstore/core';
import type { ScriptStep } from '@agentstore/core/testing';

/** A Standard Schema that accepts any JSON input (the kit depends on no schema library). */
const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-conformance',
    validate: (value: unknown) => ({ value: value as Record<string, JsonValue> }),
  },
};

export const PROCESS_FINAL_TEXT = 'All three done.';
export const PROCESS_USER_MESSAGE_ID = 'process-tier-user-message';

/** Two tool steps (parallel calls, then one), then the answer: ids fixed so every process agrees. */
export const PROCESS_SCRIPT: ScriptStep[] = [
  {
    text: 'step 1',
    toolCalls: [
      { id: 'call-notify-1', name: 'notify', input: { to: 'a' } },
      { id: 'call-lookup-1', name: 'lookup', input: { key: 'b' } },
    ],
  },
  { text: 'step 2', toolCalls: [{ id: 'call-notify-2', name: 'notify', input: { to: 'c' } }] },
  { text: PROCESS_FINAL_TEXT },
];

/**
 * `notify` is a side effect that must never run twice for one call (no retry, no reconcile);
 * `lookup` is `safeToRetry`. `onEffect` records each effect where the parent can see it.
 */
export function processAgent(onEffect: (tool: string, toolCallId: string) => void): AgentDefinition {
  const effect = (name: string) => async (_input: unknown, ctx: { toolCallId: string }) => {
    // A turn inside the handler, so a kill can land while it runs.
    await new Promise<void>((resolve) => setImmediate(resolve));
    onEffect(name, ctx.toolCallId);
    return { done: ctx.toolCallId };
  };
  return defineAgent({
    name: 'process-tier',
    instructions: 'Run two tool steps, then answer.',
    maxIterations: 6,
    tools: {
      notify: tool({
        description: 'a side effect that cannot repeat',
        input: anyInput,
        handler: effect('notify'),
      }),
      lookup: tool({
        description: 'a read that may repeat',
        input: anyInput,
        safeToRetry: true,
        handler: effect('lookup'),
      }),
    },
  });
}
