import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { text as anthropicText, startAnthropicMessagesApi } from './anthropic-messages-api.ts';
import { text as geminiText, startGeminiApi } from './gemini-generate-content-api.ts';
import { message, startOpenAIResponsesApi } from './openai-responses-api.ts';

// Each endpoint reports token usage (cached and reasoning tokens included) and a response id per
// call, in its provider's format; the AI SDK reads them into the call's result. A test of usage
// per model call can script the counts and check what was recorded.

describe('usage and response ids from the local endpoints', () => {
  it('reach the AI SDK from Anthropic: cache reads and writes, message id, model', async () => {
    const api = startAnthropicMessagesApi(() => [anthropicText('Hi.')], {
      usage: {
        input_tokens: 100,
        output_tokens: 20,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 5,
      },
    });
    const model = createAnthropic({ apiKey: 'test', fetch: api.fetch })('claude-sonnet-4-5');

    const [first, second] = [
      await generateText({ model, prompt: 'Hi' }),
      await generateText({ model, prompt: 'Hi' }),
    ];

    expect(first.usage).toMatchObject({
      inputTokens: 135,
      inputTokenDetails: { noCacheTokens: 100, cacheReadTokens: 30, cacheWriteTokens: 5 },
      outputTokens: 20,
    });
    expect([first.response.id, second.response.id]).toEqual(['msg_0001', 'msg_0002']);
    expect(first.response.modelId).toBe('claude-sonnet-4-5');
  });

  it('reach the AI SDK from Gemini: thoughts and cached content, response id', async () => {
    const api = startGeminiApi(() => [geminiText('Hi.')], {
      usage: {
        promptTokenCount: 100,
        candidatesTokenCount: 20,
        thoughtsTokenCount: 7,
        cachedContentTokenCount: 30,
      },
    });
    const model = createGoogleGenerativeAI({ apiKey: 'test', fetch: api.fetch })('gemini-3-pro-preview');

    const result = await generateText({ model, prompt: 'Hi' });

    expect(result.usage).toMatchObject({
      inputTokens: 100,
      inputTokenDetails: { noCacheTokens: 70, cacheReadTokens: 30 },
      outputTokens: 27,
      outputTokenDetails: { textTokens: 20, reasoningTokens: 7 },
      totalTokens: 127,
    });
    expect(result.response.id).toBe('resp_1');
  });

  it('reach the AI SDK from OpenAI: reasoning and cached tokens, response id', async () => {
    const api = startOpenAIResponsesApi(() => [message('Hi.')], {
      usage: { input_tokens: 100, output_tokens: 20, reasoning_tokens: 7, cached_tokens: 30 },
    });
    const model = createOpenAI({ apiKey: 'test', fetch: api.fetch })('gpt-5');

    const result = await generateText({ model, prompt: 'Hi' });

    expect(result.usage).toMatchObject({
      inputTokens: 100,
      inputTokenDetails: { noCacheTokens: 70, cacheReadTokens: 30 },
      outputTokens: 20,
      outputTokenDetails: { textTokens: 13, reasoningTokens: 7 },
    });
    expect(result.response.id).toBe('resp_1');
    expect(result.response.modelId).toBe('gpt-5');
  });
});
