import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdk } from '../src/index.ts';
import { generated, request, usageOf } from './fixtures.ts';

describe('model responses → LlmResponse', () => {
  it('returns every part in the provider order, text parts joined as the text, usage mapped', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: generated(
        [
          { type: 'reasoning', text: 'The user greets me.' },
          { type: 'text', text: 'Hello' },
          { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
          { type: 'text', text: ', world.' },
        ],
        usageOf(12, 4),
      ),
    });
    const response = await fromAiSdk(model).generate(request([{ role: 'user', content: 'Hi' }]));
    expect(response).toEqual({
      text: 'Hello, world.',
      toolCalls: [],
      parts: [
        { type: 'reasoning', text: 'The user greets me.' },
        { type: 'text', text: 'Hello' },
        { type: 'source', source: { sourceType: 'url', id: 's1', url: 'https://example.com' } },
        { type: 'text', text: ', world.' },
      ],
      usage: { inputTokens: 12, outputTokens: 4 },
    });
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    ]);
  });

  it('returns tool calls with the provider ids and their JSON inputs parsed', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: generated([
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool-call',
          toolCallId: 'call_abc',
          toolName: 'getWeather',
          input: '{"city":"Paris","days":[1,2]}',
        },
        { type: 'tool-call', toolCallId: 'call_def', toolName: 'ping', input: '' },
        { type: 'tool-call', toolCallId: 'call_ghi', toolName: 'getWeather', input: '{"city": "Ro' },
      ]),
    });
    const response = await fromAiSdk(model).generate(request([{ role: 'user', content: 'Weather?' }]));
    expect(response.text).toBe('Let me check.');
    expect(response.toolCalls).toEqual([
      { id: 'call_abc', name: 'getWeather', input: { city: 'Paris', days: [1, 2] } },
      // An empty input means "no arguments", as in the AI SDK.
      { id: 'call_def', name: 'ping', input: {} },
      // Malformed JSON stays a string: the tool's schema rejects it and the model is told why.
      { id: 'call_ghi', name: 'getWeather', input: '{"city": "Ro' },
    ]);
  });

  it('keeps calls the provider executed itself, and their results, as parts the loop never runs', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: generated([
        {
          type: 'tool-call',
          toolCallId: 'ws_1',
          toolName: 'web_search',
          input: '{}',
          providerExecuted: true,
        },
        { type: 'tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 3 } },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'save', input: '{"n":3}' },
      ]),
    });
    const response = await fromAiSdk(model).generate(request([{ role: 'user', content: 'Search' }]));
    expect(response.toolCalls).toEqual([{ id: 'call_1', name: 'save', input: { n: 3 } }]);
    expect(response.parts).toEqual([
      { type: 'provider-tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: {} },
      { type: 'provider-tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 3 } },
      { type: 'tool-call', call: 0 },
    ]);
  });

  it('reports usage only when the provider does, and a missing half as 0', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [
        generated([{ type: 'text', text: 'a' }], usageOf(undefined, undefined)),
        generated([{ type: 'text', text: 'b' }], usageOf(7, undefined)),
      ],
    });
    const llm = fromAiSdk(model);
    const first = await llm.generate(request([{ role: 'user', content: 'x' }]));
    expect(first).toEqual({ text: 'a', toolCalls: [], parts: [{ type: 'text', text: 'a' }] });
    expect('usage' in first).toBe(false);
    const second = await llm.generate(request([{ role: 'user', content: 'y' }]));
    expect(second.usage).toEqual({ inputTokens: 7, outputTokens: 0 });
  });
});
