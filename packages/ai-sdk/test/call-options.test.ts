import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { type AiSdkLanguageModel, fromAiSdk, UnsupportedModelError } from '../src/index.ts';
import { generated, request, usageOf } from './fixtures.ts';

const ask = [{ role: 'user' as const, content: 'go' }];

describe('call options and models', () => {
  it('passes the run signal through as abortSignal', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    const controller = new AbortController();
    await fromAiSdk(model).generate(request(ask, [], controller.signal));
    expect(model.doGenerateCalls[0]!.abortSignal).toBe(controller.signal);
  });

  it('rejects with the abort reason when the run is aborted during the model call', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: ({ abortSignal }) =>
        new Promise((_, reject) => {
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
        }),
    });
    const controller = new AbortController();
    const pending = fromAiSdk(model).generate(request(ask, [], controller.signal));
    const reason = new Error('lease lost');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('does not call the model when the run is already aborted', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    const reason = new Error('stop');
    await expect(fromAiSdk(model).generate(request(ask, [], AbortSignal.abort(reason)))).rejects.toBe(reason);
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('sends the settings with every call; the run owns prompt, tools and signal', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    const llm = fromAiSdk(model, {
      settings: {
        temperature: 0,
        maxOutputTokens: 256,
        headers: { 'x-trace': 'abc' },
        providerOptions: { openai: { store: false } },
      },
    });
    const controller = new AbortController();
    await llm.generate(request(ask, [], controller.signal));
    expect(model.doGenerateCalls[0]).toEqual({
      temperature: 0,
      maxOutputTokens: 256,
      headers: { 'x-trace': 'abc' },
      providerOptions: { openai: { store: false } },
      prompt: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
      ],
      abortSignal: controller.signal,
    });
  });

  it('works with spec v3 models (providers of the previous major)', async () => {
    const result: LanguageModelV3GenerateResult = {
      content: [
        { type: 'text', text: 'Calling.' },
        { type: 'tool-call', toolCallId: 'v3-call', toolName: 'lookup', input: '{"id":7}' },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: usageOf(3, 2),
      warnings: [],
    };
    const model = new MockLanguageModelV3({ doGenerate: result });
    const response = await fromAiSdk(model).generate(request(ask));
    expect(response).toEqual({
      text: 'Calling.',
      toolCalls: [{ id: 'v3-call', name: 'lookup', input: { id: 7 } }],
      parts: [
        { type: 'text', text: 'Calling.' },
        { type: 'tool-call', call: 0 },
      ],
      usage: { inputTokens: 3, outputTokens: 2 },
    });
    expect(model.doGenerateCalls[0]!.prompt).toHaveLength(2);
  });

  it('refuses model id strings and other spec versions with a typed error', () => {
    const asModel = (value: unknown) => value as AiSdkLanguageModel;
    expect(() => fromAiSdk(asModel('openai/gpt-5'))).toThrow(UnsupportedModelError);
    try {
      fromAiSdk(asModel({ specificationVersion: 'v2', provider: 'old', modelId: 'm', doGenerate() {} }));
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: 'UNSUPPORTED_MODEL',
        specificationVersion: 'v2',
        provider: 'old',
        modelId: 'm',
      });
    }
  });
});
