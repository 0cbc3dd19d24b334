import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  text as anthropicText,
  startAnthropicMessagesApi,
  thinking,
  toolUse,
} from './anthropic-messages-api.ts';
import { text as geminiText, startGeminiApi } from './gemini-generate-content-api.ts';
import { message, startOpenAIResponsesApi } from './openai-responses-api.ts';
import { type ServedEndpoint, serveOverHttp } from './serve-over-http.ts';

// The same endpoints over loopback HTTP, reached through each package's `baseURL` and Node's own
// fetch, as a separate worker process would reach them.

let served: ServedEndpoint[] = [];
afterEach(async () => {
  await Promise.all(served.map((endpoint) => endpoint.close()));
  served = [];
});
const serve = async (fetch: typeof globalThis.fetch) => {
  const endpoint = await serveOverHttp(fetch);
  served.push(endpoint);
  return endpoint.origin;
};

describe('the local provider endpoints over HTTP', () => {
  it('enforce the thinking round trip across separate model instances (as a resumed process would)', async () => {
    const SIGNATURE = `EqQBCkYIBxgCKkD${'h'.repeat(64)}`;
    // biome-ignore lint/suspicious/noExplicitAny: raw request body
    const api = startAnthropicMessagesApi((body: any) =>
      JSON.stringify(body.messages).includes('"tool_result"')
        ? [anthropicText('Done.')]
        : [thinking('Call the tool.', SIGNATURE), toolUse('toolu_9', 'ping', {})],
    );
    const baseURL = `${await serve(api.fetch)}/v1`;
    const ping = tool({ inputSchema: z.object({}), execute: async () => 'pong' });
    const options = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } as const;

    const first = await generateText({
      model: createAnthropic({ apiKey: 'test', baseURL })('claude-sonnet-4-5'),
      tools: { ping },
      prompt: 'Ping.',
      providerOptions: options,
    });
    // A second provider instance, as after a restart: only the messages carry the signature over.
    const second = await generateText({
      model: createAnthropic({ apiKey: 'test', baseURL })('claude-sonnet-4-5'),
      tools: { ping },
      messages: [{ role: 'user', content: 'Ping.' }, ...first.response.messages],
      providerOptions: options,
      stopWhen: stepCountIs(2),
    });

    expect(second.text).toBe('Done.');
    expect(api.requests.map((request) => request.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(api.requests[1]!.body.messages[1].content[0]).toEqual({
      type: 'thinking',
      thinking: 'Call the tool.',
      signature: SIGNATURE,
    });
  });

  it('answer Gemini and OpenAI requests at their usual paths', async () => {
    const gemini = startGeminiApi(() => [geminiText('Hi from Gemini.')]);
    const openai = startOpenAIResponsesApi(() => [message('Hi from OpenAI.')]);
    const googleModel = createGoogleGenerativeAI({
      apiKey: 'test',
      baseURL: `${await serve(gemini.fetch)}/v1beta`,
    });
    const openaiModel = createOpenAI({ apiKey: 'test', baseURL: `${await serve(openai.fetch)}/v1` });

    const answers = await Promise.all([
      generateText({ model: googleModel('gemini-3-pro-preview'), prompt: 'Hi' }),
      generateText({ model: openaiModel('gpt-5'), prompt: 'Hi' }),
    ]);

    expect(answers.map((answer) => answer.text)).toEqual(['Hi from Gemini.', 'Hi from OpenAI.']);
    expect(gemini.requests[0]!.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    expect(openai.requests[0]!.headers.authorization).toBe('Bearer test');
  });
});
