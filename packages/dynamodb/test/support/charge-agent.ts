import { type AgentDefinition, defineAgent, type JsonValue, tool } from '@agentstore/core';
import { type ScriptedLlm, scriptedLlm } from '@agentstore/core/testing';

/** A Standard Schema that accepts any JSON input (this package depends on no schema library). */
const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-dynamodb-test',
    validate: (value: unknown) => ({ value: value as Record<string, JsonValue> }),
  },
};

/**
 * One `charge` call, then the answer. `charge` is `safeToRetry`, so a worker that took the lease
 * while its holder's handler ran would run it again on resume: every run of it is counted.
 */
export function chargeAgent(handler: () => Promise<unknown>): AgentDefinition {
  return defineAgent({
    name: 'charge',
    instructions: 'Charge once.',
    tools: {
      charge: tool({ description: 'charges a card', input: anyInput, safeToRetry: true, handler }),
    },
  });
}

export const chargeLlm = (): ScriptedLlm =>
  scriptedLlm([{ toolCalls: [{ id: 'charge-1', name: 'charge', input: {} }] }, { text: 'Charged.' }]);
