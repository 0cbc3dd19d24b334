import type { JsonValue, LlmResponse, ProviderOptions, ReplyPart } from '@agentstore/core';
import type { LanguageModelV3GenerateResult, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { jsonCopy } from './json-copy.ts';

export type GenerateResult = LanguageModelV4GenerateResult | LanguageModelV3GenerateResult;
type ResultPart = GenerateResult['content'][number];

/**
 * The spec sends tool inputs as JSON text. Like the AI SDK, an empty input means `{}`; text that
 * is not JSON is kept as a string, so the tool's schema rejects it and the model sees why and can
 * try again, instead of the whole run failing on one malformed call.
 */
export function parseToolInput(input: string): JsonValue {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input) as JsonValue;
  } catch {
    return input;
  }
}

const options = (metadata: unknown): { providerOptions?: ProviderOptions } =>
  metadata === undefined || metadata === null
    ? {}
    : { providerOptions: jsonCopy(metadata) as ProviderOptions };

/** Bytes as base64, in chunks (a spread of millions of arguments would overflow the stack). */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A returned file's data: v4 tags it (`{ type: 'data' | 'url' }`), v3 gives base64 text or bytes. */
function fileSource(data: unknown): { data: string } | { url: string } {
  if (typeof data === 'string') return { data };
  if (data instanceof Uint8Array) return { data: toBase64(data) };
  const tagged = data as { type?: string; data?: unknown; url?: URL };
  if (tagged.type === 'url' && tagged.url !== undefined) return { url: String(tagged.url) };
  return fileSource(tagged.data);
}

/**
 * One returned part as the loop stores it, or `null` for what the AI SDK's own tool loop does
 * not send back either (an empty text without metadata) — except sources, kept for display.
 */
function replyPart(part: ResultPart, calls: LlmResponse['toolCalls']): ReplyPart | null {
  switch (part.type) {
    case 'text':
      if (part.text === '' && part.providerMetadata == null) return null;
      return { type: 'text', text: part.text, ...options(part.providerMetadata) };
    case 'reasoning':
      return { type: 'reasoning', text: part.text, ...options(part.providerMetadata) };
    case 'file':
      return {
        type: 'file',
        mediaType: part.mediaType,
        ...fileSource(part.data),
        ...options(part.providerMetadata),
      };
    case 'reasoning-file':
      return {
        type: 'reasoning-file',
        mediaType: part.mediaType,
        ...fileSource(part.data),
        ...options(part.providerMetadata),
      };
    case 'tool-call':
      if (part.providerExecuted === true) {
        return {
          type: 'provider-tool-call',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseToolInput(part.input),
          ...options(part.providerMetadata),
        };
      }
      calls.push({ id: part.toolCallId, name: part.toolName, input: parseToolInput(part.input) });
      return { type: 'tool-call', call: calls.length - 1, ...options(part.providerMetadata) };
    case 'tool-result':
      return {
        type: 'provider-tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        result: jsonCopy(part.result) ?? null,
        ...(part.isError === true ? { isError: true } : {}),
        ...options(part.providerMetadata),
      };
    case 'source': {
      const { type: _type, providerMetadata, ...source } = part;
      return {
        type: 'source',
        source: jsonCopy(source) as { [key: string]: JsonValue },
        ...options(providerMetadata),
      };
    }
    case 'custom':
      return { type: 'custom', kind: part.kind, ...options(part.providerMetadata) };
    default:
      // A provider's own approval request for a tool it executes: the AI SDK's tool loop does
      // not send it back either. (agentstore's approvals cover the tools the loop runs.)
      return null;
  }
}

/**
 * The reply, part by part, in the provider's order: text, reasoning with its signature or
 * encrypted content, files, the calls the loop must execute (with the provider's ids) and those
 * the provider executed itself. Provider metadata is kept as each part's `providerOptions`, which
 * is how the AI SDK's own tool loop hands it back on the next call.
 */
export function fromResult(result: GenerateResult): LlmResponse {
  const toolCalls: LlmResponse['toolCalls'] = [];
  const parts: ReplyPart[] = [];
  for (const part of result.content) {
    const stored = replyPart(part, toolCalls);
    if (stored !== null) parts.push(stored);
  }
  const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const usage = resultUsage(result.usage);
  const modelId = result.response?.modelId;
  const responseId = result.response?.id;
  return {
    text,
    toolCalls,
    parts,
    ...(usage ? { usage } : {}),
    ...(modelId ? { modelId } : {}),
    ...(responseId ? { responseId } : {}),
  };
}

function resultUsage(usage: GenerateResult['usage']): LlmResponse['usage'] {
  const input = usage.inputTokens;
  const output = usage.outputTokens;
  if (input.total === undefined && output.total === undefined) return undefined;
  return {
    inputTokens: input.total ?? 0,
    outputTokens: output.total ?? 0,
    ...(output.reasoning !== undefined ? { reasoningTokens: output.reasoning } : {}),
    ...(input.cacheRead !== undefined ? { cachedInputTokens: input.cacheRead } : {}),
    ...(input.cacheWrite !== undefined ? { cacheWriteTokens: input.cacheWrite } : {}),
  };
}
