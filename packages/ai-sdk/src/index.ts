/**
 * Any Vercel AI SDK language model as the run's LLM.
 * @module @agentstore/ai-sdk
 */
export { ToolSchemaConversionError, UnsupportedModelError } from './errors.ts';
export {
  type AiSdkCallSettings,
  type AiSdkLanguageModel,
  type FromAiSdkOptions,
  fromAiSdk,
} from './from-ai-sdk.ts';
export { type IsToolError, isFailedToolResult } from './to-prompt.ts';
export type { ToJsonSchema, ToolInputSchema } from './tool-schemas.ts';
