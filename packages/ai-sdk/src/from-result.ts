import type { JsonValue, LlmResponse } from '@agentstore/core';
import type { LanguageModelV3GenerateResult, LanguageModelV4GenerateResult } from '@ai-sdk/provider';

export type GenerateResult = LanguageModelV4GenerateResult | LanguageModelV3GenerateResult;

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

/**
 * Text parts are joined; calls the client must execute become the loop's tool calls, with the
 * provider's ids. Provider-executed calls and their results, reasoning, sources and files are not
 * the loop's to run or store, and are left out.
 */
export function fromResult(result: GenerateResult): LlmResponse {
  let text = '';
  const toolCalls: LlmResponse['toolCalls'] = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      toolCalls.push({ id: part.toolCallId, name: part.toolName, input: parseToolInput(part.input) });
    }
  }
  const inputTokens = result.usage.inputTokens.total;
  const outputTokens = result.usage.outputTokens.total;
  const usage =
    inputTokens === undefined && outputTokens === undefined
      ? {}
      : { usage: { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 } };
  return { text, toolCalls, ...usage };
}
