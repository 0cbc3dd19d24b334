import { AgentStoreError } from '@agentstore/core';

/** The model is not an AI SDK language model object of a spec version this adapter speaks. */
export class UnsupportedModelError extends AgentStoreError {
  readonly code = 'UNSUPPORTED_MODEL' as const;
  /** The model's `specificationVersion`, or null when it has none (e.g. a gateway model id string). */
  readonly specificationVersion: string | null;
  readonly provider: string | null;
  readonly modelId: string | null;
  constructor(facts: {
    specificationVersion: string | null;
    provider: string | null;
    modelId: string | null;
  }) {
    const what =
      facts.specificationVersion === null
        ? 'a value that is not a language model object (pass a provider model, e.g. anthropic("…"), not a model id string)'
        : `spec version ${JSON.stringify(facts.specificationVersion)} of ${facts.provider ?? '?'}/${facts.modelId ?? '?'}`;
    super(`fromAiSdk supports LanguageModelV4 and LanguageModelV3 models; got ${what}`);
    this.specificationVersion = facts.specificationVersion;
    this.provider = facts.provider;
    this.modelId = facts.modelId;
  }
}

/** A tool's input schema could not be turned into the JSON Schema the provider needs. */
export class ToolSchemaConversionError extends AgentStoreError {
  readonly code = 'TOOL_SCHEMA_CONVERSION' as const;
  readonly toolName: string;
  /** The Standard Schema vendor of the tool's input schema (`zod`, `valibot`, …). */
  readonly vendor: string;
  constructor(facts: { toolName: string; vendor: string; reason: string }, options?: { cause?: unknown }) {
    super(
      `Tool ${JSON.stringify(facts.toolName)}: cannot convert its ${facts.vendor} input schema to JSON Schema: ` +
        facts.reason,
      options,
    );
    this.toolName = facts.toolName;
    this.vendor = facts.vendor;
  }
}
