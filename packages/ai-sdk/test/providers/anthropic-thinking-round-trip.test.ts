import { createAnthropic } from '@ai-sdk/anthropic';
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
import {
  missingThinkingMessage,
  redactedThinking,
  startAnthropicMessagesApi,
  text,
  thinking,
  toolUse,
} from './anthropic-messages-api.ts';
import { readJson } from './endpoint-kit.ts';

// `@ai-sdk/anthropic` against the local Messages API: the AI SDK's own tool loop hands the signed
// thinking back and completes; a follow-up that drops or alters it is refused as the API does.

const SIGNATURE = `EqQBCkYIBxgCKkD${'x'.repeat(400)}/+=`;
const REDACTED = `EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP${'Q'.repeat(200)}`;
const weatherTool = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
const thinkingOn = { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } } as const;

/** Thinks, calls the tool; once the tool result is in: answers. */
// biome-ignore lint/suspicious/noExplicitAny: raw request body
const thinkThenCall = (body: any) =>
  JSON.stringify(body.messages).includes('"tool_result"')
    ? [text('It is 21°C in Paris.')]
    : [
        thinking('The user wants the weather: call getWeather.', SIGNATURE),
        redactedThinking(REDACTED),
        toolUse('toolu_01', 'getWeather', { city: 'Paris' }),
      ];

const setup = () => {
  const api = startAnthropicMessagesApi(thinkThenCall);
  const model = createAnthropic({ apiKey: 'test', fetch: api.fetch })('claude-sonnet-4-5');
  return { api, model };
};

/**
 * The conversation after the first step as the AI SDK hands it back (user, assistant with
 * reasoning and the tool call, tool result), with the assistant's parts passed through `edit`.
 */
async function afterFirstStep(
  model: ReturnType<typeof setup>['model'],
  edit: (parts: AssistantPart[]) => AssistantPart[] = (parts) => parts,
): Promise<ModelMessage[]> {
  const first = await generateText({
    model,
    tools: { getWeather: weatherTool },
    prompt: 'Weather in Paris?',
    providerOptions: thinkingOn,
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
type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!APICallError.isInstance(error)) throw new Error(`expected an APICallError, got ${String(error)}`);
  return { status: error.statusCode, message: error.message, body: JSON.parse(error.responseBody ?? 'null') };
};

describe('Anthropic Messages API with extended thinking', () => {
  it("completes the AI SDK's tool loop: the follow-up starts with the thinking blocks as returned", async () => {
    const { api, model } = setup();

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(3),
      providerOptions: thinkingOn,
    });

    expect(result.text).toBe('It is 21°C in Paris.');
    expect(api.requests).toHaveLength(2);
    const [first, second] = api.requests.map((request) => request.body);
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants the weather: call getWeather.', signature: SIGNATURE },
        { type: 'redacted_thinking', data: REDACTED },
        { type: 'tool_use', id: 'toolu_01', name: 'getWeather', input: { city: 'Paris' } },
      ],
    });
    expect(second.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01' });
    // Byte for byte in the raw body too, not just after JSON parsing.
    expect(api.requests[1]!.text).toContain(JSON.stringify(SIGNATURE));
  });

  it('refuses a follow-up whose tool_use message lost its thinking, with the API error', async () => {
    const { api, model } = setup();
    const dropped = await afterFirstStep(model, (parts) => parts.filter((part) => part.type !== 'reasoning'));

    const { status, message, body } = await refusal(
      generateText({ model, messages: dropped, providerOptions: thinkingOn, maxRetries: 0 }),
    );

    expect(status).toBe(400);
    expect(message).toBe(missingThinkingMessage(1, 'tool_use'));
    expect(message).toContain('Expected `thinking` or `redacted_thinking`, but found `tool_use`');
    expect(body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } });
    expect(api.requests).toHaveLength(2);
  });

  it('refuses a follow-up that drops only the redacted_thinking block', async () => {
    const { model } = setup();
    const followUp = await afterFirstStep(model, (parts) =>
      parts.filter((part) => !(part.type === 'reasoning' && part.providerOptions?.anthropic?.redactedData)),
    );
    expect((followUp[1]!.content as AssistantPart[]).map((part) => part.type)).toEqual([
      'reasoning',
      'tool-call',
    ]);

    const { status, message } = await refusal(
      generateText({ model, messages: followUp, providerOptions: thinkingOn, maxRetries: 0 }),
    );

    expect(status).toBe(400);
    expect(message).toContain('blocks in the latest assistant message cannot be modified');
  });

  it('refuses a thinking block whose signature is not byte-identical', async () => {
    const { model } = setup();
    const altered = await afterFirstStep(model, (parts) =>
      parts.map((part) =>
        part.type === 'reasoning' && part.providerOptions?.anthropic?.signature
          ? { ...part, providerOptions: { anthropic: { signature: `${SIGNATURE.slice(0, -1)}A` } } }
          : part,
      ),
    );

    const { status, message } = await refusal(
      generateText({ model, messages: altered, providerOptions: thinkingOn, maxRetries: 0 }),
    );

    expect(status).toBe(400);
    expect(message).toBe('messages.1.content.0: Invalid `signature` in `thinking` block');
  });

  it('refuses manual thinking with a forced tool choice, which the AI SDK downgrades to auto', async () => {
    const { api, model } = setup();

    const forced = await api.fetch('https://api.anthropic.com/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        tool_choice: { type: 'any' },
        tools: [{ name: 'getWeather', input_schema: { type: 'object' } }],
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      }),
    });
    const viaSdk = await generateText({
      model,
      tools: { getWeather: weatherTool },
      toolChoice: 'required',
      prompt: 'Weather in Paris?',
      providerOptions: thinkingOn,
    });

    expect(forced.status).toBe(400);
    expect((await readJson(forced)).error.message).toBe(
      'Thinking may not be enabled when tool_choice forces tool use.',
    );
    expect(api.requests[1]!.body.tool_choice).toEqual({ type: 'auto' });
    expect(viaSdk.toolCalls.map((call) => call.toolName)).toEqual(['getWeather']);
  });

  it('returns no thinking and asks for none when thinking is off', async () => {
    const { api, model } = setup();

    const result = await generateText({
      model,
      tools: { getWeather: weatherTool },
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('It is 21°C in Paris.');
    expect(result.steps[0]!.reasoning).toEqual([]);
    expect(api.requests[1]!.body.messages[1].content.map((block: { type: string }) => block.type)).toEqual([
      'tool_use',
    ]);
  });
});
