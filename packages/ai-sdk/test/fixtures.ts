import type { LlmMessage, LlmToolSpec } from '@agentstore/core';
import type {
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

export const usageOf = (input?: number, output?: number): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A complete doGenerate result around the given content parts. */
export const generated = (
  content: LanguageModelV4Content[],
  usage: LanguageModelV4Usage = usageOf(10, 5),
): LanguageModelV4GenerateResult => ({
  content,
  finishReason: {
    unified: content.some((p) => p.type === 'tool-call') ? 'tool-calls' : 'stop',
    raw: undefined,
  },
  usage,
  warnings: [],
});

export const request = (
  messages: LlmMessage[],
  tools: LlmToolSpec[] = [],
  signal: AbortSignal = new AbortController().signal,
) => ({ system: 'Be brief.', messages, tools, signal });
