import { InvalidArgumentError, type JsonValue, type LlmMessage } from '@agentstore/core';
import { assistantContent, contentOutput, type SpecVersion, sentInput, userContent } from './prompt-parts.ts';

// The subset of the spec's prompt this adapter produces for messages without parts. It is
// identical in LanguageModelV4 and LanguageModelV3; parts (files above all) differ, see prompt-parts.
interface TextPart {
  type: 'text';
  text: string;
}

interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: JsonValue;
}

export type ToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: JsonValue }
  | { type: 'error-text'; value: string }
  | { type: 'error-json'; value: JsonValue };

interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: ToolResultOutput;
  providerOptions?: unknown;
}

export type PromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: unknown[] }
  | { role: 'assistant'; content: unknown[] }
  | { role: 'tool'; content: ToolResultPart[] };

/** Decides whether a stored tool result (its content parsed from JSON) is an error for the model. */
export type IsToolError = (value: JsonValue, message: LlmMessage) => boolean;

/**
 * The loop marks every failed call — handler error, invalid input, unknown tool, a
 * `tool-durability-error` after a crash, a rejected approval — with a `kind`; a successful
 * result has none. So a tool that returns `{ error: … }` as a normal result stays a result.
 */
export const isFailedToolResult: IsToolError = (_value, message) => message.kind !== undefined;

function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch {
    return { ok: false };
  }
}

/** The stored content is the JSON text of the result: parse it back to a value for the provider. */
export function toolResultOutput(message: LlmMessage, isToolError: IsToolError): ToolResultOutput {
  const parsed = parseJson(message.content);
  // Not JSON (a message written by hand or by another writer): send the text as it is.
  if (!parsed.ok) return { type: 'text', value: message.content };
  const { value } = parsed;
  if (isToolError(value, message)) {
    // A bare `{ error: "…" }` reads best as error text; richer errors keep their facts.
    const fields = typeof value === 'object' && value !== null ? Object.entries(value) : [];
    const [only] = fields;
    if (fields.length === 1 && only?.[0] === 'error' && typeof only[1] === 'string') {
      return { type: 'error-text', value: only[1] };
    }
    return { type: 'error-json', value };
  }
  // Like the AI SDK's own tool outputs: strings as text, everything else as JSON.
  return typeof value === 'string' ? { type: 'text', value } : { type: 'json', value };
}

/** Maps the loop's conversation to the spec's prompt: system first, consecutive tool results merged. */
export function toPrompt(
  system: string,
  messages: LlmMessage[],
  isToolError: IsToolError,
  version: SpecVersion = 'v4',
): PromptMessage[] {
  const prompt: PromptMessage[] = [];
  if (system !== '') prompt.push({ role: 'system', content: system });
  const callNames = new Map<string, string>();
  // The AI SDK's tool loop gives a result the provider options of its call (Gemini's thought signature).
  const callOptions = new Map<string, unknown>();
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content });
        return;
      case 'user':
        prompt.push({
          role: 'user',
          content: message.parts
            ? userContent(message.parts, version)
            : [{ type: 'text', text: message.content }],
        });
        return;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        for (const call of calls) callNames.set(call.id, call.name);
        if (message.parts) {
          for (const part of message.parts) {
            if (part.type === 'tool-call' && part.providerOptions)
              callOptions.set(part.toolCallId, part.providerOptions);
          }
          prompt.push({ role: 'assistant', content: assistantContent(message, message.parts, version) });
          return;
        }
        const content: Array<TextPart | ToolCallPart> = [];
        if (message.content !== '' || calls.length === 0)
          content.push({ type: 'text', text: message.content });
        for (const call of calls) {
          content.push({
            type: 'tool-call',
            toolCallId: call.id,
            toolName: call.name,
            input: sentInput(call.input),
          });
        }
        prompt.push({ role: 'assistant', content });
        return;
      }
      case 'tool': {
        const toolCallId = message.toolCallId;
        if (toolCallId === undefined) {
          throw new InvalidArgumentError({
            argument: `messages[${index}].toolCallId`,
            reason: 'a tool result must name the call it answers',
          });
        }
        const toolName = message.toolName ?? callNames.get(toolCallId);
        if (toolName === undefined) {
          throw new InvalidArgumentError({
            argument: `messages[${index}].toolName`,
            reason: `is missing and no earlier assistant message has a call ${JSON.stringify(toolCallId)}`,
          });
        }
        const part: ToolResultPart = {
          type: 'tool-result',
          toolCallId,
          toolName,
          // A result shown to the model as text and files; a failed call keeps its error output.
          output:
            message.parts && message.kind === undefined
              ? (contentOutput(message.parts, version) as never)
              : toolResultOutput(message, isToolError),
          ...(callOptions.has(toolCallId) ? { providerOptions: callOptions.get(toolCallId) } : {}),
        };
        const last = prompt.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        return;
      }
    }
  });
  return prompt;
}
