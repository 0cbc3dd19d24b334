import { createOpenAI } from '@ai-sdk/openai';
import {
  APICallError,
  type AssistantModelMessage,
  generateText,
  type ModelMessage,
  stepCountIs,
  tool,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJson } from './endpoint-kit.ts';
import {
  functionCall,
  message,
  missingReasoningMessage,
  notPersistedMessage,
  reasoning,
  startOpenAIResponsesApi,
} from './openai-responses-api.ts';

// `@ai-sdk/openai` against the local Responses API, stateless (`store: false`) with encrypted
// reasoning: the AI SDK's own tool loop hands the reasoning item back before its function_call;
// a follow-up without it, or with it altered, is refused.

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const ENCRYPTED = `gAAAAABpF${'Zx0'.repeat(1400)}==`;
const weatherTool = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
const stateless = {
  openai: { store: false, include: ['reasoning.encrypted_content'], reasoningSummary: 'auto' },
} as const;
type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

/** Reasons, calls the tool; once the call's output is in: answers. */
// biome-ignore lint/suspicious/noExplicitAny: raw request body
const reasonThenCall = (body: any) =>
  body.input.some((item: { type?: string }) => item.type === 'function_call_output')
    ? [message('It is 21°C in Paris.')]
    : [
        reasoning('rs_01', ENCRYPTED, ['The user wants the weather.']),
        functionCall('call_01', 'getWeather', { city: 'Paris' }),
      ];

const setup = () => {
  const api = startOpenAIResponsesApi(reasonThenCall);
  const model = createOpenAI({ apiKey: 'test', fetch: api.fetch })('gpt-5');
  return { api, model };
};

async function afterFirstStep(
  model: ReturnType<typeof setup>['model'],
  edit: (parts: AssistantPart[]) => AssistantPart[],
): Promise<ModelMessage[]> {
  const first = await generateText({
    model,
    tools: { getWeather: weatherTool },
    prompt: 'Weather in Paris?',
    providerOptions: stateless,
  });
  const [assistant, toolResults] = first.response.messages;
  if (
    assistant?.role !== 'assistant' ||
    typeof assistant.content === 'string' ||
    toolResults?.role !== 'tool'
  )
    throw new Error('expected an assistant turn with a tool call, then its result');
  return [
    { role: 'user', content: 'Weather in Paris?' },
    { ...assistant, content: edit(assistant.content) },
    toolResults,
  ];
}

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!APICallError.isInstance(error)) throw new Error(`expected an APICallError, got ${String(error)}`);
  return { status: error.statusCode, message: error.message, body: JSON.parse(error.responseBody ?? 'null') };
};

describe('OpenAI Responses API, store: false with encrypted reasoning', () => {
  it("completes the AI SDK's tool loop: the reasoning item comes back before its function_call", async () => {
    const { api, model } = setup();

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(3),
      providerOptions: stateless,
    });

    expect(result.text).toBe('It is 21°C in Paris.');
    expect(api.requests).toHaveLength(2);
    const [first, second] = api.requests.map((request) => request.body);
    expect(first).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(second.input.slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_01',
        encrypted_content: ENCRYPTED,
        summary: [{ type: 'summary_text', text: 'The user wants the weather.' }],
      },
      { type: 'function_call', call_id: 'call_01', name: 'getWeather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_01', output: '{"city":"Paris","tempC":21}' },
    ]);
  });

  it('refuses a hand-built follow-up without the reasoning item, with the API error', async () => {
    const { model } = setup();
    const dropped = await afterFirstStep(model, (parts) => parts.filter((part) => part.type !== 'reasoning'));

    const { status, message, body } = await refusal(
      generateText({ model, messages: dropped, providerOptions: stateless, maxRetries: 0 }),
    );

    expect(status).toBe(400);
    expect(message).toBe(missingReasoningMessage('fc_call_01', 'rs_01'));
    expect(body).toEqual({ error: { message, type: 'invalid_request_error', param: 'input', code: null } });
  });

  it('refuses reasoning whose encrypted_content was altered', async () => {
    const { model } = setup();
    const altered = await afterFirstStep(model, (parts) =>
      parts.map((part) =>
        part.type === 'reasoning'
          ? {
              ...part,
              providerOptions: { openai: { itemId: 'rs_01', reasoningEncryptedContent: `${ENCRYPTED}x` } },
            }
          : part,
      ),
    );

    const { status, body } = await refusal(
      generateText({ model, messages: altered, providerOptions: stateless, maxRetries: 0 }),
    );

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_encrypted_content' });
  });

  it('refuses a reference to an item that store: false never kept', async () => {
    const { api, model } = setup();
    await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather?',
      providerOptions: stateless,
    });

    const response = await api.fetch('https://api.openai.com/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: JSON.stringify({
        model: 'gpt-5',
        store: false,
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
          { type: 'item_reference', id: 'rs_01' },
          { type: 'function_call', call_id: 'call_01', name: 'getWeather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_01', output: '{"tempC":21}' },
        ],
      }),
    });

    expect(response.status).toBe(404);
    expect((await readJson(response)).error.message).toBe(notPersistedMessage('rs_01'));
  });

  it('returns encrypted_content only when the request includes reasoning.encrypted_content', async () => {
    const { api } = setup();
    const ask = async (include: string[]) => {
      const response = await api.fetch('https://api.openai.com/v1/responses', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
        body: JSON.stringify({
          model: 'gpt-5',
          store: false,
          include,
          input: [{ role: 'user', content: 'Weather in Paris?' }],
        }),
      });
      expect(response.status).toBe(200);
      return (await readJson(response)).output[0];
    };

    expect(await ask([])).toEqual({ type: 'reasoning', id: 'rs_01', summary: [expect.any(Object)] });
    expect(await ask(['reasoning.encrypted_content'])).toMatchObject({
      id: 'rs_01',
      encrypted_content: ENCRYPTED,
    });
  });
});
