import type { LlmToolSpec } from '@agentstore/core';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { fromAiSdk, type ToolInputSchema, ToolSchemaConversionError } from '../src/index.ts';
import { generated, request } from './fixtures.ts';

const ok = () => new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
const ask = [{ role: 'user' as const, content: 'go' }];

/** A Standard Schema that validates but cannot describe itself as JSON Schema (no 1.1 `jsonSchema`). */
const validateOnly: ToolInputSchema = {
  '~standard': {
    version: 1,
    vendor: 'handmade',
    validate: (value) => ({ value }),
  },
};

describe('tool specs → JSON Schema function tools', () => {
  it('sends Standard JSON Schema (zod 4) as draft-07 JSON Schema, objects closed like the AI SDK does', async () => {
    const model = ok();
    const tools: LlmToolSpec[] = [
      {
        name: 'getWeather',
        description: 'Current weather for a city',
        input: z.object({
          city: z.string().describe('City name'),
          days: z.number().int().min(1).max(7).optional(),
          where: z.object({ lat: z.number(), lon: z.number() }).optional(),
          extra: z.looseObject({ note: z.string() }).optional(),
        }),
      },
      { name: 'ping', description: '', input: z.object({}) },
    ];
    await fromAiSdk(model).generate(request(ask, tools));
    expect(model.doGenerateCalls[0]!.tools).toEqual([
      {
        type: 'function',
        name: 'getWeather',
        description: 'Current weather for a city',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name' },
            days: { type: 'integer', minimum: 1, maximum: 7 },
            where: {
              type: 'object',
              properties: { lat: { type: 'number' }, lon: { type: 'number' } },
              required: ['lat', 'lon'],
              additionalProperties: false,
            },
            // A schema that says it accepts extra keys keeps saying so.
            extra: {
              type: 'object',
              properties: { note: { type: 'string' } },
              required: ['note'],
              additionalProperties: {},
            },
          },
          required: ['city'],
          additionalProperties: false,
        },
      },
      {
        type: 'function',
        name: 'ping',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {},
          additionalProperties: false,
        },
      },
    ]);
  });

  it('sends no tools when the agent has none', async () => {
    const model = ok();
    await fromAiSdk(model).generate(request(ask));
    expect(model.doGenerateCalls[0]).not.toHaveProperty('tools');
  });

  it('converts each schema once per adapter, however many calls the run makes', async () => {
    const input = z.object({ q: z.string() });
    const spy = vi.spyOn(input['~standard'].jsonSchema, 'input');
    const model = ok();
    const llm = fromAiSdk(model);
    const tools = [{ name: 'search', description: 'Search', input }];
    await llm.generate(request(ask, tools));
    await llm.generate(request(ask, tools));
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenCalledWith({ target: 'draft-07' });
    expect(model.doGenerateCalls[1]!.tools).toEqual(model.doGenerateCalls[0]!.tools);
  });

  it('fails with a typed error, before calling the model, for a schema without Standard JSON Schema', async () => {
    const model = ok();
    const failure = fromAiSdk(model).generate(
      request(ask, [{ name: 'legacy', description: 'x', input: validateOnly }]),
    );
    await expect(failure).rejects.toThrow(ToolSchemaConversionError);
    await expect(failure).rejects.toMatchObject({
      code: 'TOOL_SCHEMA_CONVERSION',
      toolName: 'legacy',
      vendor: 'handmade',
      message: expect.stringContaining('toJsonSchema'),
    });
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('uses the toJsonSchema hook for such schemas, as given', async () => {
    const model = ok();
    const hook = vi.fn(() => ({ type: 'object' as const, properties: { id: { type: 'string' as const } } }));
    const llm = fromAiSdk(model, { toJsonSchema: hook });
    const tools = [{ name: 'legacy', description: 'Legacy', input: validateOnly }];
    await llm.generate(request(ask, tools));
    await llm.generate(request(ask, tools));
    expect(hook).toHaveBeenCalledTimes(1);
    expect(hook).toHaveBeenCalledWith(validateOnly, 'legacy');
    expect(model.doGenerateCalls[0]!.tools).toEqual([
      {
        type: 'function',
        name: 'legacy',
        description: 'Legacy',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      },
    ]);
  });

  it('wraps a schema the library cannot express in JSON Schema in the typed error, with the cause', async () => {
    const model = ok();
    const failure = fromAiSdk(model).generate(
      request(ask, [{ name: 'book', description: 'Book', input: z.object({ at: z.date() }) }]),
    );
    await expect(failure).rejects.toMatchObject({
      code: 'TOOL_SCHEMA_CONVERSION',
      toolName: 'book',
      vendor: 'zod',
      cause: expect.any(Error),
    });
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
