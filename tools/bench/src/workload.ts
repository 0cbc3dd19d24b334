import {
  type AgentDefinition,
  defineAgent,
  type JsonValue,
  type NewMessage,
  type SessionInit,
  tool,
} from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { type ScriptStep, scriptedLlm } from '@agentstore/core/testing';

/** What every benchmarked session is created with (as `run()` creates it). */
export const benchSessionInit = (): SessionInit => ({
  agentName: 'agentstore-bench',
  ownerId: null,
  tenantId: null,
  state: { usage: { inputTokens: 0, outputTokens: 0 } },
});

/** The state `run()` writes with every append: token usage so far. */
export const benchState = (appends: number): JsonValue => ({
  usage: { inputTokens: 10 * appends, outputTokens: 5 * appends },
});

const template = (role: NewMessage['role']): NewMessage => ({
  id: crypto.randomUUID(),
  role,
  content: '',
  ...(role === 'tool' ? { toolCallId: 'call_0000000000', toolName: 'work' } : {}),
  createdAt: new Date().toISOString(),
});

/** A message with a fresh id; `fields` override anything. */
export const benchMessage = (fields: Partial<NewMessage> = {}): NewMessage => ({
  ...template('user'),
  content: 'go',
  ...fields,
});

/** The smallest `--payload` a message can have: an empty tool result's JSON. */
export const MIN_PAYLOAD_BYTES = messageByteLength(template('tool'));

/** A message of exactly `bytes` bytes as `messageByteLength` (the stores' limit check) measures it. */
export function messageOfPayload(bytes: number, role: NewMessage['role'] = 'tool'): NewMessage {
  const base = template(role);
  const padding = bytes - messageByteLength(base);
  if (padding < 0) throw new Error(`a message cannot be smaller than ${messageByteLength(base)} bytes`);
  return { ...base, content: 'x'.repeat(padding) };
}

/** The append the bench times: three messages of `bytes` each, as one tool step's results. */
export const payloadBatch = (bytes: number): NewMessage[] => [
  messageOfPayload(bytes),
  messageOfPayload(bytes),
  messageOfPayload(bytes),
];

const passThrough = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-bench',
    validate: (value: unknown) => ({ value }),
  },
};

export interface BenchLoop {
  agent: AgentDefinition;
  /** A fresh scripted model for one run: `steps` tool steps, then the final answer. */
  llm: () => ReturnType<typeof scriptedLlm>;
}

/**
 * The scripted agent every loop measurement runs: `steps` tool steps (the model asks for one
 * tool call, the tool answers with `payloadBytes` of data), then a final answer. Per step,
 * `run()` appends twice: the assistant message with its call, then the tool result.
 */
export function benchLoop(steps: number, payloadBytes: number): BenchLoop {
  const data = 'x'.repeat(payloadBytes);
  const script: ScriptStep[] = [
    ...Array.from({ length: steps }, (_, n) => ({
      text: `step ${n}`,
      toolCalls: [{ name: 'work', input: { n } }],
    })),
    { text: 'done' },
  ];
  const agent = defineAgent({
    name: 'agentstore-bench',
    instructions: 'Work through the steps.',
    maxIterations: steps + 1,
    tools: {
      work: tool({
        description: 'One step of work.',
        input: passThrough,
        safeToRetry: true,
        handler: () => ({ data }),
      }),
    },
  });
  return { agent, llm: () => scriptedLlm(script) };
}
