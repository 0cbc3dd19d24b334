import type { LlmToolSpec } from '@agentstore/core';
import type { JSONSchema7, JSONSchema7Definition, LanguageModelV4FunctionTool } from '@ai-sdk/provider';
import { ToolSchemaConversionError } from './errors.ts';

export type ToolInputSchema = LlmToolSpec['input'];

/** Turns a tool's input schema into JSON Schema, for schema libraries without Standard JSON Schema. */
export type ToJsonSchema = (schema: ToolInputSchema, toolName: string) => JSONSchema7;

/** What Standard JSON Schema (`@standard-schema/spec` 1.1) adds to a schema's `~standard` props. */
interface StandardJsonSchemaConverter {
  input: (options: { target: string }) => Record<string, unknown>;
}

const converterOf = (schema: ToolInputSchema): StandardJsonSchemaConverter | null => {
  const converter = (schema['~standard'] as { jsonSchema?: Partial<StandardJsonSchemaConverter> }).jsonSchema;
  return typeof converter?.input === 'function' ? (converter as StandardJsonSchemaConverter) : null;
};

const mapValues = <V>(record: Record<string, V>, fn: (value: V) => V): Record<string, V> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));

/**
 * Objects that do not say otherwise accept no extra keys, as the AI SDK does for every schema it
 * sends (OpenAI's strict mode requires it). Explicit `additionalProperties` values are kept.
 */
export function closeObjects(definition: JSONSchema7Definition): JSONSchema7Definition {
  if (typeof definition === 'boolean') return definition;
  const schema: JSONSchema7 & { $defs?: Record<string, JSONSchema7Definition> } = { ...definition };
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object')) {
    const extra = schema.additionalProperties;
    schema.additionalProperties = extra === undefined ? false : closeObjects(extra);
    if (schema.properties) schema.properties = mapValues(schema.properties, closeObjects);
  }
  if (Array.isArray(schema.items)) schema.items = schema.items.map(closeObjects);
  else if (schema.items !== undefined) schema.items = closeObjects(schema.items);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (branches) schema[key] = branches.map(closeObjects);
  }
  if (schema.definitions) schema.definitions = mapValues(schema.definitions, closeObjects);
  if (schema.$defs) schema.$defs = mapValues(schema.$defs, closeObjects);
  return schema;
}

function convert(spec: LlmToolSpec, hook: ToJsonSchema | undefined): JSONSchema7 {
  const vendor = spec.input['~standard'].vendor;
  const converter = converterOf(spec.input);
  if (converter) {
    let converted: Record<string, unknown>;
    try {
      // draft-07 is the dialect of the spec's `JSONSchema7` and what the AI SDK itself asks for.
      converted = converter.input({ target: 'draft-07' });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ToolSchemaConversionError({ toolName: spec.name, vendor, reason }, { cause: error });
    }
    return closeObjects(converted as JSONSchema7) as JSONSchema7;
  }
  if (hook) return hook(spec.input, spec.name);
  throw new ToolSchemaConversionError({
    toolName: spec.name,
    vendor,
    reason:
      'the schema does not implement Standard JSON Schema (`~standard.jsonSchema`); ' +
      'pass `toJsonSchema` to fromAiSdk() to convert it yourself',
  });
}

/**
 * Maps core tool specs to the spec's function tools. Conversions are cached per schema object,
 * since the loop sends the same tools on every model call.
 */
export function functionToolMapper(hook?: ToJsonSchema): (spec: LlmToolSpec) => LanguageModelV4FunctionTool {
  const cache = new WeakMap<object, JSONSchema7>();
  return (spec) => {
    let inputSchema = cache.get(spec.input);
    if (!inputSchema) {
      inputSchema = convert(spec, hook);
      cache.set(spec.input, inputSchema);
    }
    return {
      type: 'function',
      name: spec.name,
      ...(spec.description ? { description: spec.description } : {}),
      inputSchema,
    };
  };
}
