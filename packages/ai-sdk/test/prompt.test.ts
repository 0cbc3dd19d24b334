import { InvalidArgumentError, type LlmMessage, ToolDurabilityError } from '@agentstore/core';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdk } from '../src/index.ts';
import { isFailedToolResult, toolResultOutput } from '../src/to-prompt.ts';
import { generated, request } from './fixtures.ts';

const durability = new ToolDurabilityError({ sessionId: 's1', toolCallId: 'c3', toolName: 'postSlack' });
// What the loop stores for a call a crash interrupted (kind: 'tool-durability-error').
const durabilityContent = {
  error: durability.name,
  code: durability.code,
  message: durability.message,
  toolName: 'postSlack',
  toolCallId: 'c3',
};

const conversation: LlmMessage[] = [
  { role: 'user', content: 'Weather in Paris and Rome, then tell the team.' },
  {
    role: 'assistant',
    content: 'Checking both.',
    toolCalls: [
      { id: 'c1', name: 'getWeather', input: { city: 'Paris' } },
      { id: 'c2', name: 'getWeather', input: { city: 'Rome' } },
    ],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'getWeather', content: '{"tempC":21,"sky":null}' },
  // No toolName: taken from the call it answers.
  { role: 'tool', toolCallId: 'c2', kind: 'tool-error', content: '{"error":"Rome is offline"}' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'c3', name: 'postSlack', input: { text: 'Paris 21°C' } },
      { id: 'c4', name: 'summarize', input: 'free text' },
      { id: 'c5', name: 'legacy', input: {} },
    ],
  },
  {
    role: 'tool',
    toolCallId: 'c3',
    toolName: 'postSlack',
    kind: 'tool-durability-error',
    content: JSON.stringify(durabilityContent),
  },
  { role: 'tool', toolCallId: 'c4', toolName: 'summarize', content: '"Paris is warm."' },
  { role: 'tool', toolCallId: 'c5', toolName: 'legacy', content: 'not json at all' },
  { role: 'assistant', content: 'Paris is 21°C; Rome is unavailable; Slack state unknown.' },
  { role: 'system', content: 'Answer in French from now on.' },
  { role: 'user', content: 'Merci' },
];

describe('core messages → the provider prompt', () => {
  it('maps a multi-turn conversation with tool calls and results both ways', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'De rien.' }]) });
    await fromAiSdk(model).generate(request(conversation));
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome, then tell the team.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Paris' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'getWeather', input: { city: 'Rome' } },
        ],
      },
      {
        // Consecutive results share one tool message, as one AI SDK step does.
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'getWeather',
            output: { type: 'json', value: { tempC: 21, sky: null } },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'getWeather',
            output: { type: 'error-text', value: 'Rome is offline' },
          },
        ],
      },
      {
        // No empty text part before calls.
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c3', toolName: 'postSlack', input: { text: 'Paris 21°C' } },
          { type: 'tool-call', toolCallId: 'c4', toolName: 'summarize', input: {} }, // not an object: sent back as {}, as the AI SDK's loop does
          { type: 'tool-call', toolCallId: 'c5', toolName: 'legacy', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c3',
            toolName: 'postSlack',
            output: { type: 'error-json', value: durabilityContent },
          },
          {
            type: 'tool-result',
            toolCallId: 'c4',
            toolName: 'summarize',
            output: { type: 'text', value: 'Paris is warm.' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c5',
            toolName: 'legacy',
            output: { type: 'text', value: 'not json at all' },
          },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Paris is 21°C; Rome is unavailable; Slack state unknown.' }],
      },
      { role: 'system', content: 'Answer in French from now on.' },
      { role: 'user', content: [{ type: 'text', text: 'Merci' }] },
    ]);
  });

  it('sends no system message for empty instructions, and keeps an empty final answer as text', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    await fromAiSdk(model).generate({
      ...request([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'b' },
      ]),
      system: '',
    });
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
    ]);
  });

  it('lets isToolError decide which results are errors', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    const llm = fromAiSdk(model, {
      isToolError: (value) => typeof value === 'object' && value !== null && 'failed' in value,
    });
    await llm.generate(
      request([
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'a', name: 't', input: {} },
            { id: 'b', name: 't', input: {} },
          ],
        },
        { role: 'tool', toolCallId: 'a', toolName: 't', content: '{"failed":true}' },
        { role: 'tool', toolCallId: 'b', toolName: 't', content: '{"error":"a field, not a failure"}' },
      ]),
    );
    const results = model.doGenerateCalls[0]!.prompt.at(-1)!.content;
    expect(results).toEqual([
      expect.objectContaining({ output: { type: 'error-json', value: { failed: true } } }),
      expect.objectContaining({ output: { type: 'json', value: { error: 'a field, not a failure' } } }),
    ]);
  });

  it('rejects a tool result that names no call, before calling the model', async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: 'text', text: 'ok' }]) });
    const llm = fromAiSdk(model);
    await expect(llm.generate(request([{ role: 'tool', content: '{}' }]))).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(
      llm.generate(request([{ role: 'tool', toolCallId: 'ghost', content: '{}' }])),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'messages[0].toolName' });
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});

describe('which results are errors by default', () => {
  it('treats a result as an error only when the loop stored it with a kind', () => {
    const data: LlmMessage = { role: 'tool', toolCallId: 'x', content: '{"error":"just data"}' };
    expect(toolResultOutput(data, isFailedToolResult)).toEqual({
      type: 'json',
      value: { error: 'just data' },
    });
    expect(toolResultOutput({ ...data, kind: 'tool-error' }, isFailedToolResult)).toEqual({
      type: 'error-text',
      value: 'just data',
    });
  });
});
