import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { JsonValue, Role, ToolCall } from './records.ts';

export interface LlmMessage {
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** Set on failed tool results (`tool-error`, `tool-durability-error`, …) so adapters can mark them as errors. */
  kind?: string;
}

export interface LlmToolSpec {
  name: string;
  description: string;
  input: StandardSchemaV1;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface LlmResponse {
  text: string;
  /** Calls without an `id` get a deterministic one from the loop before they are stored. */
  toolCalls: { id?: string; name: string; input: JsonValue }[];
  usage?: Usage;
}

/** The one thing agentstore needs from a model provider. */
export interface LlmAdapter {
  generate(request: {
    system: string;
    messages: LlmMessage[];
    tools: LlmToolSpec[];
    signal: AbortSignal;
  }): Promise<LlmResponse>;
}
