import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { MessagePart, ProviderOptions, ToolCallPart } from './message-parts.ts';
import type { JsonValue, Role, ToolCall } from './records.ts';

export interface LlmMessage {
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** Set on failed tool results (`tool-error`, `tool-durability-error`, …) so adapters can mark them as errors. */
  kind?: string;
  /**
   * The message part by part, as stored (see `NewMessage.parts`): an adapter that knows parts
   * sends these back to the provider as they are; one that does not can use `content`.
   */
  parts?: MessagePart[];
}

export interface LlmToolSpec {
  name: string;
  description: string;
  input: StandardSchemaV1;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, those spent reasoning. */
  reasoningTokens?: number;
  /** Of `inputTokens`, those read from the provider's cache. */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the provider's cache. */
  cacheWriteTokens?: number;
}

/** A reply's tool call in its place among the reply's parts: `call` indexes the reply's `toolCalls`. */
export interface ReplyToolCallPart {
  type: 'tool-call';
  call: number;
  providerOptions?: ProviderOptions;
}

/** One part of a model reply, in the order the provider gave them. */
export type ReplyPart = Exclude<MessagePart, ToolCallPart> | ReplyToolCallPart;

export interface LlmResponse {
  text: string;
  /** Calls without an `id` get a deterministic one from the loop before they are stored. */
  toolCalls: { id?: string; name: string; input: JsonValue }[];
  usage?: Usage;
  /**
   * The whole reply part by part, when the adapter has more than text and calls (reasoning,
   * files, provider options, provider-executed calls). The loop stores it with the assistant
   * message and hands it back unchanged on every later call; `text` must be its text parts joined.
   */
  parts?: ReplyPart[];
  /** The model that answered and the provider's response id, stored with the call's usage. */
  modelId?: string;
  responseId?: string;
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
