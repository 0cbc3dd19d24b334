import type { JsonValue } from './records.ts';

/**
 * What a provider attached to a part, keyed by provider (`{ anthropic: { signature } }`,
 * `{ google: { thoughtSignature } }`, `{ openai: { itemId, reasoningEncryptedContent } }`), as the
 * AI SDK's message parts carry it (the model's `providerMetadata`, sent back as `providerOptions`).
 * Kept as opaque JSON, byte for byte: reasoning models require it back on the next call.
 */
export type ProviderOptions = { [provider: string]: { [key: string]: JsonValue } };

export interface TextPart {
  type: 'text';
  text: string;
  providerOptions?: ProviderOptions;
}

/** The model's reasoning. Redacted or encrypted reasoning has empty `text`; its data is in `providerOptions`. */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: ProviderOptions;
}

/**
 * A file: base64 `data` or a `url` (exactly one). Stored inline, so it counts toward the store's
 * message and append limits; large media should go by URL.
 */
export interface FilePart {
  type: 'file';
  mediaType: string;
  data?: string;
  url?: string;
  filename?: string;
  providerOptions?: ProviderOptions;
}

/** A file the model produced as part of its reasoning (AI SDK `reasoning-file`). */
export interface ReasoningFilePart {
  type: 'reasoning-file';
  mediaType: string;
  data?: string;
  url?: string;
  providerOptions?: ProviderOptions;
}

/**
 * The place of one of the message's own tool calls among its parts. Its name and input are the
 * `toolCalls` entry with this id (stored once); the part keeps what the provider attached to it.
 */
export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  providerOptions?: ProviderOptions;
}

/** A call the provider executed itself (a hosted web search): stored as returned, never run by the loop. */
export interface ProviderToolCallPart {
  type: 'provider-tool-call';
  toolCallId: string;
  toolName: string;
  input: JsonValue;
  providerOptions?: ProviderOptions;
}

/** The result of a provider-executed call, as the provider returned it. */
export interface ProviderToolResultPart {
  type: 'provider-tool-result';
  toolCallId: string;
  toolName: string;
  result: JsonValue;
  isError?: boolean;
  providerOptions?: ProviderOptions;
}

/** A cited source (a URL or a document), kept for display; providers are not sent sources back. */
export interface SourcePart {
  type: 'source';
  source: { [key: string]: JsonValue };
  providerOptions?: ProviderOptions;
}

/** Provider-specific content with no common shape (AI SDK `custom`), kept as returned. */
export interface CustomPart {
  type: 'custom';
  kind: string;
  providerOptions?: ProviderOptions;
}

/**
 * One part of a stored message. A message keeps `parts` only when they say more than its
 * `content` and `toolCalls` do (reasoning, files, provider metadata, provider-executed calls);
 * `content` is then the concatenation of its text parts, for readers that only know text.
 */
export type MessagePart =
  | TextPart
  | ReasoningPart
  | FilePart
  | ReasoningFilePart
  | ToolCallPart
  | ProviderToolCallPart
  | ProviderToolResultPart
  | SourcePart
  | CustomPart;

export const MESSAGE_PART_TYPES: readonly MessagePart['type'][] = [
  'text',
  'reasoning',
  'file',
  'reasoning-file',
  'tool-call',
  'provider-tool-call',
  'provider-tool-result',
  'source',
  'custom',
];

/**
 * What one model call used, committed with the assistant message it produced, so a crash and a
 * replay never count a call twice or lose one.
 */
export interface ModelCallUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, those spent reasoning. */
  reasoningTokens?: number;
  /** Of `inputTokens`, those read from the provider's cache. */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the provider's cache. */
  cacheWriteTokens?: number;
  /** The model that answered, as the provider named it. */
  modelId?: string;
  /** The provider's id of the response. */
  responseId?: string;
}

/** A file in the user's message as `run({ message })` takes it: base64 text, bytes, or a URL. */
export interface UserFileInput {
  type: 'file';
  mediaType: string;
  data: string | Uint8Array | ArrayBuffer | URL;
  filename?: string;
  providerOptions?: ProviderOptions;
}

/** One part of the user's message as `run({ message })` takes it. */
export type UserContentInput =
  | { type: 'text'; text: string; providerOptions?: ProviderOptions }
  | UserFileInput;
