import type { LlmAdapter } from '@agentstore/core';
import type { LanguageModelV3, LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { UnsupportedModelError } from './errors.ts';
import { fromResult } from './from-result.ts';
import { type IsToolError, isFailedToolResult, toPrompt } from './to-prompt.ts';
import { functionToolMapper, type ToJsonSchema } from './tool-schemas.ts';

/** A provider's language model object: `anthropic('…')`, `openai('…')`, … (spec v4, or v3). */
export type AiSdkLanguageModel = LanguageModelV4 | LanguageModelV3;

/** Call settings sent with every model call: `temperature`, `maxOutputTokens`, `providerOptions`, … */
export type AiSdkCallSettings = Omit<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'abortSignal'>;

export interface FromAiSdkOptions {
  /** Sent with every call. `prompt`, `tools` and `abortSignal` always come from the run. */
  settings?: AiSdkCallSettings;
  /**
   * Converts a tool's input schema to JSON Schema when the schema does not implement Standard
   * JSON Schema itself (zod 4 does). Without it such a tool is a
   * `ToolSchemaConversionError`.
   */
  toJsonSchema?: ToJsonSchema;
  /**
   * Which stored tool results go to the model as errors (`error-text` / `error-json` outputs,
   * e.g. Anthropic's `is_error`). Default: a JSON object with an `error` key, the shape the loop
   * stores for failed, rejected and crash-interrupted calls.
   */
  isToolError?: IsToolError;
}

function assertSupported(model: unknown): asserts model is AiSdkLanguageModel {
  const candidate = (typeof model === 'object' && model !== null ? model : {}) as Partial<
    Record<'specificationVersion' | 'provider' | 'modelId' | 'doGenerate', unknown>
  >;
  const version = candidate.specificationVersion;
  if ((version === 'v4' || version === 'v3') && typeof candidate.doGenerate === 'function') return;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  throw new UnsupportedModelError({
    specificationVersion: text(version),
    provider: text(candidate.provider),
    modelId: text(candidate.modelId),
  });
}

/**
 * Turns an AI SDK language model into the loop's `LlmAdapter`.
 *
 * It calls the model's `doGenerate` directly rather than `generateText`: one model call per
 * `generate`, no tool execution and no multi-step loop on the AI SDK's side, so agentstore's loop
 * stays the only executor of tools — it commits every tool call before any handler runs, which is
 * what makes a crashed run resumable without firing a side effect twice. (`doGenerate` also does
 * no retries; wrap the model with `wrapLanguageModel` middleware if you want them.)
 */
export function fromAiSdk(model: AiSdkLanguageModel, options: FromAiSdkOptions = {}): LlmAdapter {
  assertSupported(model);
  const toFunctionTool = functionToolMapper(options.toJsonSchema);
  const isToolError = options.isToolError ?? isFailedToolResult;
  return {
    async generate({ system, messages, tools, signal }) {
      signal.throwIfAborted();
      // The prompt is built for the model's spec version (files are shaped differently in v3).
      const prompt = toPrompt(system, messages, isToolError, model.specificationVersion);
      const call = {
        ...options.settings,
        prompt: prompt as LanguageModelV4CallOptions['prompt'],
        ...(tools.length > 0 ? { tools: tools.map(toFunctionTool) } : {}),
        abortSignal: signal,
      } satisfies LanguageModelV4CallOptions;
      const result = await model.doGenerate(call as never);
      return fromResult(result);
    },
  };
}
