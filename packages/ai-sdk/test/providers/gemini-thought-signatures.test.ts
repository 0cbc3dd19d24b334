import { createGoogleGenerativeAI } from '@ai-sdk/google';
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
  type GeminiEndpointOptions,
  missingSignatureMessage,
  SKIP_THOUGHT_SIGNATURE,
  startGeminiApi,
  text,
  thought,
} from './gemini-generate-content-api.ts';

// `@ai-sdk/google` against the local generateContent endpoint: the AI SDK's own tool loop hands
// each functionCall's thoughtSignature back; a follow-up without it gets the placeholder (recorded,
// refused in strict mode), and one with no signature at all is refused as Gemini 3 does.

// The placeholder warning is asserted on through `result.warnings`; keep it out of the log.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const SIGNATURE = `CiQBcsjafN${'k'.repeat(300)}==`;
const SECOND_SIGNATURE = `CiQBcsjafO${'m'.repeat(120)}==`;
const weatherTool = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

// biome-ignore lint/suspicious/noExplicitAny: raw request body
const hasFunctionResponse = (body: any) => JSON.stringify(body.contents).includes('"functionResponse"');

/** Thinks, calls the tool (signature on the call); once the result is in: answers. */
// biome-ignore lint/suspicious/noExplicitAny: raw request body
const thinkThenCall = (body: any) =>
  hasFunctionResponse(body)
    ? [text('It is 21°C in Paris.')]
    : [thought('The user wants the weather.'), functionCall('getWeather', { city: 'Paris' }, SIGNATURE)];

const setup = (options: GeminiEndpointOptions = {}, reply = thinkThenCall) => {
  const api = startGeminiApi(reply, options);
  const model = createGoogleGenerativeAI({ apiKey: 'test', fetch: api.fetch })('gemini-3-pro-preview');
  return { api, model };
};

/** The conversation after the first step, its assistant parts passed through `edit`. */
async function afterFirstStep(
  model: ReturnType<typeof setup>['model'],
  edit: (parts: AssistantPart[]) => AssistantPart[],
): Promise<ModelMessage[]> {
  const first = await generateText({
    model,
    tools: { getWeather: weatherTool },
    prompt: 'Weather in Paris?',
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

const dropSignatures = (parts: AssistantPart[]) =>
  parts
    .filter((part) => part.type !== 'reasoning')
    .map((part) => {
      const { providerOptions: _, ...rest } = part as AssistantPart & { providerOptions?: unknown };
      return rest as AssistantPart;
    });

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!APICallError.isInstance(error)) throw new Error(`expected an APICallError, got ${String(error)}`);
  return { status: error.statusCode, message: error.message, body: JSON.parse(error.responseBody ?? 'null') };
};

describe('Gemini generateContent with thought signatures', () => {
  it("completes the AI SDK's tool loop: the functionCall comes back with its thoughtSignature", async () => {
    const { api, model } = setup({ strict: true });

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('It is 21°C in Paris.');
    expect(api.requests).toHaveLength(2);
    expect(api.requests[0]!.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    const model1 = api.requests[1]!.body.contents[1];
    expect(model1.role).toBe('model');
    expect(model1.parts.at(-1)).toEqual({
      functionCall: { id: expect.any(String), name: 'getWeather', args: { city: 'Paris' } },
      thoughtSignature: SIGNATURE,
    });
    expect(api.requests[1]!.body.contents[2].parts[0].functionResponse).toMatchObject({ name: 'getWeather' });
    expect(api.violations).toEqual([]);
  });

  it('records the placeholder the AI SDK substitutes for a lost signature, as the real API accepts it', async () => {
    const { api, model } = setup();
    const messages = await afterFirstStep(model, dropSignatures);

    const result = await generateText({ model, messages });

    expect(result.text).toBe('It is 21°C in Paris.');
    expect(result.warnings?.map((warning) => ('message' in warning ? warning.message : ''))).toContainEqual(
      expect.stringContaining(SKIP_THOUGHT_SIGNATURE),
    );
    expect(api.requests[1]!.body.contents[1].parts).toEqual([
      {
        functionCall: { id: expect.any(String), name: 'getWeather', args: { city: 'Paris' } },
        thoughtSignature: SKIP_THOUGHT_SIGNATURE,
      },
    ]);
    expect(api.violations).toEqual([
      { request: 1, kind: 'placeholder', functionName: 'getWeather', path: 'contents[1].parts[0]' },
    ]);
  });

  it('refuses the placeholder with HTTP 400 in strict mode', async () => {
    const { api, model } = setup({ strict: true });
    const messages = await afterFirstStep(model, dropSignatures);

    const { status, body } = await refusal(generateText({ model, messages, maxRetries: 0 }));

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(body.error.message).toContain(`placeholder thought signature \`${SKIP_THOUGHT_SIGNATURE}\``);
    expect(api.violations.map((violation) => violation.kind)).toEqual(['placeholder']);
  });

  it('refuses a hand-built follow-up whose functionCall has no thoughtSignature, with the API error', async () => {
    const { api, model } = setup();
    await generateText({ model, tools: { getWeather: weatherTool }, prompt: 'Weather in Paris?' });

    const response = await api.fetch(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:generateContent',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'test' },
        body: JSON.stringify({
          contents: [
            { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
            { role: 'model', parts: [{ functionCall: { name: 'getWeather', args: { city: 'Paris' } } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'getWeather', response: { tempC: 21 } } }] },
          ],
        }),
      },
    );

    expect(response.status).toBe(400);
    expect(await readJson(response)).toEqual({
      error: { code: 400, message: missingSignatureMessage('getWeather', 1), status: 'INVALID_ARGUMENT' },
    });
    expect(api.violations).toEqual([
      { request: 1, kind: 'missing', functionName: 'getWeather', path: 'contents[1].parts[0]' },
    ]);
  });

  it('refuses a signature that was altered or moved to another part', async () => {
    const { model } = setup();
    const altered = await afterFirstStep(model, (parts) =>
      parts.map((part) =>
        part.type === 'tool-call'
          ? { ...part, providerOptions: { google: { thoughtSignature: `${SIGNATURE}x` } } }
          : part,
      ),
    );
    const moved = await afterFirstStep(model, (parts) =>
      parts.map((part) => (part.type === 'tool-call' ? { ...part, input: { city: 'Lyon' } } : part)),
    );

    for (const messages of [altered, moved]) {
      const { status, message } = await refusal(generateText({ model, messages, maxRetries: 0 }));
      expect(status).toBe(400);
      expect(message).toMatch(/^Corrupted thought signature at contents\[1\]\.parts\[\d\]/);
    }
  });

  it("completes sequential steps: each step's functionCall comes back with its own signature", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: raw request body
    const sequential = (body: any) => {
      const answered = JSON.stringify(body.contents).split('"functionResponse"').length - 1;
      if (answered === 0) return [functionCall('getWeather', { city: 'Paris' }, SIGNATURE)];
      if (answered === 1) return [functionCall('getWeather', { city: 'Lyon' }, SECOND_SIGNATURE)];
      return [text('Paris 21°C, Lyon 21°C.')];
    };
    const { api, model } = setup({ strict: true }, sequential);

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris, then Lyon?',
      stopWhen: stepCountIs(4),
    });

    expect(result.text).toBe('Paris 21°C, Lyon 21°C.');
    expect(api.requests).toHaveLength(3);
    const contents = api.requests[2]!.body.contents;
    expect(contents.map((content: { role: string }) => content.role)).toEqual([
      'user',
      'model',
      'user',
      'model',
      'user',
    ]);
    expect([contents[1].parts[0].thoughtSignature, contents[3].parts[0].thoughtSignature]).toEqual([
      SIGNATURE,
      SECOND_SIGNATURE,
    ]);
    expect(api.violations).toEqual([]);
  });

  it('accepts parallel calls where only the first functionCall carries the signature', async () => {
    const parallel = (body: unknown) =>
      hasFunctionResponse(body)
        ? [text('Paris 21°C, Lyon 23°C.')]
        : [
            functionCall('getWeather', { city: 'Paris' }, SECOND_SIGNATURE),
            functionCall('getWeather', { city: 'Lyon' }),
          ];
    const { api, model } = setup({ strict: true }, parallel);

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris and Lyon?',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('Paris 21°C, Lyon 23°C.');
    const replayed = api.requests[1]!.body.contents[1].parts;
    expect(replayed.map((part: { thoughtSignature?: string }) => part.thoughtSignature)).toEqual([
      SECOND_SIGNATURE,
      undefined,
    ]);
    expect(api.violations).toEqual([]);
  });
});
