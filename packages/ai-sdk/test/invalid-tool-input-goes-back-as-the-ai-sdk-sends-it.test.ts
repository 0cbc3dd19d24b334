import { defineAgent, tool as durableTool, run } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import type { LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { fromAiSdk } from '../src/index.ts';
import { generated } from './fixtures.ts';

// A call whose input is not JSON, or JSON that is not an object, fails the tool's schema. The
// AI SDK's tool loop sends such a call back with `input: {}` (to-response-messages: `part.invalid
// && typeof part.input !== 'object' ? {} : part.input`): Anthropic's tool_use.input and Gemini's
// functionCall.args must be objects. A durable run must send the same follow-up.

const asSent = (prompt: LanguageModelV4Prompt | undefined) => JSON.parse(JSON.stringify(prompt));
const answer: LanguageModelV4Content[] = [{ type: 'text', text: 'Sorry.' }];
const assistantMessages = (prompt: LanguageModelV4Prompt | undefined) =>
  asSent(prompt).filter((m: { role: string }) => m.role === 'assistant');

it.each([
  ['input that is not JSON', '{"id":'],
  ['input that is a JSON string', '"seven"'],
  ['input that is a JSON number', '7'],
])('sends back a call with %s as the AI SDK tool loop does', async (_, input) => {
  const turn: LanguageModelV4Content[] = [
    { type: 'text', text: 'Looking.' },
    { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input },
  ];
  const reference = new MockLanguageModelV4({ doGenerate: [generated(turn), generated(answer)] });
  await generateText({
    model: reference,
    system: 'You look up orders.',
    prompt: [{ role: 'user', content: [{ type: 'text', text: 'Where is order 7?' }] }],
    tools: {
      lookup: tool({ inputSchema: z.object({ id: z.number() }), execute: async () => ({ ok: true }) }),
    },
    stopWhen: stepCountIs(2),
  });

  const model = new MockLanguageModelV4({ doGenerate: [generated(turn), generated(answer)] });
  const agent = defineAgent({
    name: 'orders',
    instructions: 'You look up orders.',
    tools: {
      lookup: durableTool({
        description: 'Look an order up',
        input: z.object({ id: z.number() }),
        handler: async () => ({ ok: true }),
      }),
    },
  });
  const result = await run(agent, {
    store: durableMemoryStore(),
    sessionId: 'bad-input',
    llm: fromAiSdk(model),
    message: 'Where is order 7?',
  });
  expect(result.status).toBe('complete');
  expect(assistantMessages(model.doGenerateCalls[1]?.prompt)).toEqual(
    assistantMessages(reference.doGenerateCalls[1]?.prompt),
  );
});
