import { defineAgent, tool as durableTool, run } from '@agentstore/core';
import { crashAfterToolResults, durableMemoryStore, isSimulatedCrash } from '@agentstore/core/testing';
import { createAnthropic } from '@ai-sdk/anthropic';
import type { LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromAiSdk } from '../src/index.ts';
import { generated } from './fixtures.ts';
import {
  text as anthropicText,
  startAnthropicMessagesApi,
  toolUse,
} from './providers/anthropic-messages-api.ts';

const SIGNATURE = `EqQB${'a1B2'.repeat(2_500)}==`; // 10 KB, as Anthropic's signatures run long
const ENCRYPTED = 'gAAAAA'.padEnd(4_096, 'Zx9');

/** A reasoning model's tool turn: signed thinking, text, a call carrying Gemini's thought signature. */
const toolTurn: LanguageModelV4Content[] = [
  {
    type: 'reasoning',
    text: 'The user wants order 7 — look it up.',
    providerMetadata: { anthropic: { signature: SIGNATURE } },
  },
  { type: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'cmVkYWN0ZWQ=' } } },
  {
    type: 'reasoning',
    text: '',
    providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: ENCRYPTED } },
  },
  { type: 'text', text: 'Checking.', providerMetadata: { google: { thoughtSignature: 'ts-text' } } },
  {
    type: 'tool-call',
    toolCallId: 'call_0',
    toolName: 'lookup',
    input: '{"id":7}',
    providerMetadata: { google: { thoughtSignature: 'ts-call-ü\u0000' } },
  },
];
const answer: LanguageModelV4Content[] = [{ type: 'text', text: 'Order 7 shipped.' }];

/** What a provider sees: JSON, so keys holding `undefined` are the same as absent ones. */
const asSent = (prompt: LanguageModelV4Prompt | undefined) => JSON.parse(JSON.stringify(prompt));

describe('a reasoning turn survives a crash exactly as the AI SDK would send it back', () => {
  it('sends the follow-up the AI SDK tool loop sends, after a crash between write #1 and the result', async () => {
    // The AI SDK's own loop on the same replies: the reference follow-up.
    const reference = new MockLanguageModelV4({ doGenerate: [generated(toolTurn), generated(answer)] });
    await generateText({
      model: reference,
      system: 'You look up orders.',
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Where is order 7?' }] }],
      tools: {
        lookup: tool({
          inputSchema: z.object({ id: z.number() }),
          execute: async () => ({ status: 'shipped' }),
        }),
      },
      stopWhen: stepCountIs(2),
    });
    const expected = asSent(reference.doGenerateCalls[1]?.prompt);

    // agentstore: the process dies after write #1 (the call is committed, its result is not).
    // (The crashed run may already have sent its next request while the result was being written.)
    const model = new MockLanguageModelV4({
      doGenerate: [generated(toolTurn), generated(answer), generated(answer)],
    });
    let effects = 0;
    const agent = defineAgent({
      name: 'orders',
      instructions: 'You look up orders.',
      tools: {
        lookup: durableTool({
          description: 'Look an order up',
          input: z.object({ id: z.number() }),
          safeToRetry: true,
          handler: async () => {
            effects += 1;
            return { status: 'shipped' };
          },
        }),
      },
    });
    const store = durableMemoryStore();
    const llm = fromAiSdk(model);
    const options = { sessionId: 'order-7', llm, leaseTtlMs: 1_000, leaseWaitMs: 10_000 };
    await expect(
      run(agent, { ...options, store: crashAfterToolResults(store), message: 'Where is order 7?' }),
    ).rejects.toSatisfy(isSimulatedCrash);
    // A new process resumes: the orphaned call is re-invoked (safeToRetry), then the model is asked again.
    const resumed = await run(agent, { ...options, store });
    expect(resumed.status).toBe('complete');
    expect(resumed.response).toBe('Order 7 shipped.');
    expect(effects).toBe(2);
    expect(asSent(model.doGenerateCalls.at(-1)?.prompt)).toEqual(expected);

    // What was stored: the parts byte for byte, and the call's usage with its message.
    const assistant = resumed.messages.find((m) => m.role === 'assistant' && m.toolCalls);
    expect(assistant?.parts?.[0]).toEqual({
      type: 'reasoning',
      text: 'The user wants order 7 — look it up.',
      providerOptions: { anthropic: { signature: SIGNATURE } },
    });
    expect(assistant?.parts?.at(-1)).toEqual({
      type: 'tool-call',
      toolCallId: 'call_0',
      providerOptions: { google: { thoughtSignature: 'ts-call-ü\u0000' } },
    });
    expect(assistant?.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
  });

  it('sends an image and a PDF from the user message as the AI SDK does, before and after a resume', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    const pdf = 'JVBERi0xLjQK';
    const userContent = [
      { type: 'text' as const, text: 'What is in these?' },
      { type: 'file' as const, mediaType: 'image/png', data: png },
      { type: 'file' as const, mediaType: 'application/pdf', data: pdf, filename: 'invoice.pdf' },
      { type: 'file' as const, mediaType: 'image/jpeg', data: new URL('https://example.com/cat.jpg') },
    ];
    const supportedUrls = { 'image/*': [/^https:\/\//] };
    const reference = new MockLanguageModelV4({ doGenerate: [generated(answer)], supportedUrls });
    await generateText({ model: reference, prompt: [{ role: 'user', content: userContent }] });

    const model = new MockLanguageModelV4({ doGenerate: [generated(answer)], supportedUrls });
    const agent = defineAgent({ name: 'vision', instructions: '' });
    const result = await run(agent, {
      store: durableMemoryStore(),
      sessionId: 'files',
      llm: fromAiSdk(model),
      message: userContent,
    });
    expect(result.status).toBe('complete');
    const sentFiles = asSent(model.doGenerateCalls[0]?.prompt)[0].content;
    const referenceFiles = asSent(reference.doGenerateCalls[0]?.prompt)[0].content;
    // The same parts in the same order; inline data as the same bytes (base64 text here, bytes there).
    expect(sentFiles.map((p: { type: string; mediaType?: string }) => [p.type, p.mediaType])).toEqual(
      referenceFiles.map((p: { type: string; mediaType?: string }) => [p.type, p.mediaType]),
    );
    // Inline data as base64: text stays as it is, bytes (serialised as an object of numbers) are encoded.
    const bytes = (data: { type: string; data?: unknown; url?: string }) =>
      data.type === 'url'
        ? data.url
        : typeof data.data === 'string'
          ? data.data
          : Buffer.from(Object.values(data.data as object) as number[]).toString('base64');
    expect(sentFiles.slice(1).map((p: { data: never }) => bytes(p.data))).toEqual(
      referenceFiles.slice(1).map((p: { data: never }) => bytes(p.data)),
    );
    expect(sentFiles[2].filename).toBe('invoice.pdf');
    expect(result.messages[0]?.parts?.[1]).toEqual({
      type: 'file',
      mediaType: 'image/png',
      data: 'iVBORwD/',
    });
  });
});

describe('a tool that shows the model an image', () => {
  it('stores its JSON output and its parts, and sends them as a content output', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [
        generated([{ type: 'tool-call', toolCallId: 'shot_1', toolName: 'screenshot', input: '{}' }]),
        generated([{ type: 'text', text: 'A login page.' }]),
      ],
    });
    const agent = defineAgent({
      name: 'browser',
      instructions: '',
      tools: {
        screenshot: durableTool({
          description: 'Takes a screenshot',
          input: z.object({}),
          handler: () => ({ width: 2, png: 'iVBORw0KGgo=' }),
          toModelOutput: ({ width, png }) => [
            { type: 'text', text: `A ${width}px screenshot:` },
            { type: 'file', mediaType: 'image/png', data: png },
          ],
        }),
      },
    });
    const result = await run(agent, {
      store: durableMemoryStore(),
      sessionId: 'shot',
      llm: fromAiSdk(model),
      message: 'Look',
    });
    const stored = result.messages.find((m) => m.role === 'tool');
    expect(JSON.parse(stored!.content)).toEqual({ width: 2, png: 'iVBORw0KGgo=' });
    expect(stored?.parts).toEqual([
      { type: 'text', text: 'A 2px screenshot:' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ]);
    const toolMessage = asSent(model.doGenerateCalls[1]?.prompt).find(
      (m: { role: string }) => m.role === 'tool',
    );
    expect(toolMessage.content[0].output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'A 2px screenshot:' },
        { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' },
      ],
    });
  });

  it('reaches Anthropic as an image inside the tool_result', async () => {
    const api = startAnthropicMessagesApi((body: { messages: unknown }) =>
      JSON.stringify(body.messages).includes('"tool_result"')
        ? [anthropicText('A login page.')]
        : [toolUse('toolu_1', 'screenshot', {})],
    );
    const agent = defineAgent({
      name: 'browser',
      instructions: '',
      tools: {
        screenshot: durableTool({
          description: 'Takes a screenshot',
          input: z.object({}),
          handler: () => 'iVBORw0KGgo=',
          toModelOutput: (png) => [{ type: 'file', mediaType: 'image/png', data: png }],
        }),
      },
    });
    const llm = fromAiSdk(createAnthropic({ apiKey: 'test', fetch: api.fetch })('claude-sonnet-4-5'));
    const result = await run(agent, { store: durableMemoryStore(), sessionId: 'shot', llm, message: 'Look' });
    expect(result.response).toBe('A login page.');
    const toolResult = api.requests[1]!.body.messages[2].content[0];
    expect(toolResult).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
    });
  });
});
