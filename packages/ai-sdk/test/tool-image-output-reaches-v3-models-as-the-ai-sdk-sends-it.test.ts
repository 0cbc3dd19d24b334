import { defineAgent, tool as durableTool, run } from '@agentstore/core';
import { durableMemoryStore } from '@agentstore/core/testing';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { fromAiSdk } from '../src/index.ts';
import { generated } from './fixtures.ts';

// A tool's image output (toModelOutput) for a spec v3 model: the AI SDK's tool loop converts its
// prompt for v3 models (convertV4PromptToV3) and sends the image as `file-data` with its media
// type; prompt-parts' contentOutput sends `image-data` instead. A durable run must send what the
// AI SDK's own loop sends at the same point.

const toolMessages = (prompt: LanguageModelV3Prompt | undefined) =>
  JSON.parse(JSON.stringify(prompt)).filter((m: { role: string }) => m.role === 'tool');

it("sends a tool's image output to a v3 model as the AI SDK tool loop does", async () => {
  const turn = generated([{ type: 'tool-call', toolCallId: 'shot_1', toolName: 'screenshot', input: '{}' }]);
  const answer = generated([{ type: 'text', text: 'A login page.' }]);
  const png = 'iVBORw0KGgo=';

  const reference = new MockLanguageModelV3({ doGenerate: [turn, answer] as never });
  await generateText({
    model: reference,
    prompt: 'Look',
    tools: {
      screenshot: tool({
        inputSchema: z.object({}),
        execute: async () => png,
        toModelOutput: () => ({
          type: 'content',
          value: [
            { type: 'text', text: 'The page:' },
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: png } },
          ],
        }),
      }),
    },
    stopWhen: stepCountIs(2),
  });

  const model = new MockLanguageModelV3({ doGenerate: [turn, answer] as never });
  const agent = defineAgent({
    name: 'browser',
    instructions: '',
    tools: {
      screenshot: durableTool({
        description: 'Takes a screenshot',
        input: z.object({}),
        handler: () => png,
        toModelOutput: (data) => [
          { type: 'text', text: 'The page:' },
          { type: 'file', mediaType: 'image/png', data },
        ],
      }),
    },
  });
  await run(agent, {
    store: durableMemoryStore(),
    sessionId: 'shot',
    llm: fromAiSdk(model),
    message: 'Look',
  });
  expect(toolMessages(model.doGenerateCalls[1]?.prompt)).toEqual(
    toolMessages(reference.doGenerateCalls[1]?.prompt),
  );
});
