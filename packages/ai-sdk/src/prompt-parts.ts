import type { FilePart, JsonValue, LlmMessage, MessagePart, ReasoningFilePart } from '@agentstore/core';

/**
 * A call's input as the AI SDK's tool loop sends it back: an input that is not a JSON object (not
 * JSON at all, or a string or a number: it failed the tool's schema) goes back as `{}`, since
 * providers require an object there (Anthropic's `tool_use.input`, Gemini's `functionCall.args`).
 */
export const sentInput = (input: JsonValue): JsonValue => (typeof input === 'object' ? input : {});

/** Which prompt shape the model takes: files are tagged in spec v4 and bare in v3. */
export type SpecVersion = 'v4' | 'v3';

type Options = { providerOptions?: MessagePart['providerOptions'] };
type PromptFileData = { type: 'data'; data: string } | { type: 'url'; url: URL } | string | URL;

/** A stored file as the spec's prompt takes it. */
function promptFileData(part: FilePart | ReasoningFilePart, version: SpecVersion): PromptFileData {
  if (part.url !== undefined) {
    const url = new URL(part.url);
    return version === 'v4' ? { type: 'url', url } : url;
  }
  const data = part.data ?? '';
  return version === 'v4' ? { type: 'data', data } : data;
}

const withOptions = (part: MessagePart): Options =>
  part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions };

/** A user or assistant file part for the prompt. */
export function promptFile(part: FilePart, version: SpecVersion) {
  return {
    type: 'file' as const,
    data: promptFileData(part, version),
    mediaType: part.mediaType,
    ...(part.filename !== undefined ? { filename: part.filename } : {}),
    ...withOptions(part),
  };
}

/** Like the AI SDK's tool outputs for a provider-executed result: strings as text, the rest as JSON. */
function providerResultOutput(result: JsonValue, isError: boolean) {
  if (isError) return { type: 'error-json' as const, value: result };
  return typeof result === 'string'
    ? { type: 'text' as const, value: result }
    : { type: 'json' as const, value: result };
}

/**
 * A stored assistant message's parts, as the AI SDK's own tool loop sends an assistant turn back:
 * each part with what the provider attached to it as `providerOptions` (Anthropic's thinking
 * signature, Gemini's thought signature, OpenAI's encrypted reasoning), calls in their place.
 * Sources are not sent back (the AI SDK drops them too); a reasoning file or a custom part has no
 * place in a spec v3 prompt.
 */
export function assistantContent(message: LlmMessage, parts: readonly MessagePart[], version: SpecVersion) {
  const calls = new Map((message.toolCalls ?? []).map((call) => [call.id, call]));
  const content: unknown[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        content.push({ type: part.type, text: part.text, ...withOptions(part) });
        break;
      case 'file':
        content.push(promptFile(part, version));
        break;
      case 'reasoning-file':
        if (version === 'v4') {
          content.push({
            type: 'reasoning-file',
            data: promptFileData(part, version),
            mediaType: part.mediaType,
            ...withOptions(part),
          });
        }
        break;
      case 'tool-call': {
        const call = calls.get(part.toolCallId);
        if (call === undefined) break; // (the store boundary makes every part name a call)
        content.push({
          type: 'tool-call',
          toolCallId: call.id,
          toolName: call.name,
          input: sentInput(call.input),
          ...withOptions(part),
        });
        break;
      }
      case 'provider-tool-call':
        content.push({
          type: 'tool-call',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: sentInput(part.input),
          providerExecuted: true,
          ...withOptions(part),
        });
        break;
      case 'provider-tool-result':
        content.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: providerResultOutput(part.result, part.isError === true),
          ...withOptions(part),
        });
        break;
      case 'custom':
        if (version === 'v4') content.push({ type: 'custom', kind: part.kind, ...withOptions(part) });
        break;
      case 'source':
        break;
    }
  }
  return content;
}

/** A stored user message's parts: text (empty text left out, as the AI SDK does) and files. */
export function userContent(parts: readonly MessagePart[], version: SpecVersion) {
  const content: unknown[] = [];
  for (const part of parts) {
    if (part.type === 'text' && part.text !== '')
      content.push({ type: 'text', text: part.text, ...withOptions(part) });
    else if (part.type === 'file') content.push(promptFile(part, version));
  }
  return content;
}

/**
 * A tool result stored with parts (`toModelOutput`) as the spec's `content` output: text and
 * files, in the shape each spec version names them (v4 `file`; v3 `file-data` / `file-url`).
 */
export function contentOutput(parts: readonly MessagePart[], version: SpecVersion) {
  const value: unknown[] = [];
  for (const part of parts) {
    if (part.type === 'text') value.push({ type: 'text', text: part.text, ...withOptions(part) });
    if (part.type !== 'file') continue;
    if (version === 'v4') {
      value.push({
        type: 'file',
        data: promptFileData(part, version),
        mediaType: part.mediaType,
        ...(part.filename !== undefined ? { filename: part.filename } : {}),
        ...withOptions(part),
      });
      continue;
    }
    // As the AI SDK converts a v4 prompt for a v3 model: `file-data` / `file-url`, images included.
    value.push(
      part.url !== undefined
        ? { type: 'file-url', url: part.url, ...withOptions(part) }
        : {
            type: 'file-data',
            data: part.data ?? '',
            mediaType: part.mediaType,
            ...(part.filename !== undefined ? { filename: part.filename } : {}),
            ...withOptions(part),
          },
    );
  }
  return { type: 'content' as const, value };
}
