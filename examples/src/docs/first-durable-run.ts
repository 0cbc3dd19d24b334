// examples/src/docs/first-durable-run.ts

import { fromAiSdk } from '@agentstore/ai-sdk';
import { defineAgent, type LlmAdapter, run, tool } from '@agentstore/core';
import { sqliteStore } from '@agentstore/sqlite';
import { anthropic } from '@ai-sdk/anthropic';
import { z } from 'zod';

// A reasoning model (reads ANTHROPIC_API_KEY). Its signed thinking is stored with each turn and
// sent back on the next model call, as Anthropic requires, in this process or after a crash.
export const reasoningModel = (): LlmAdapter =>
  fromAiSdk(anthropic('claude-sonnet-4-5'), {
    settings: {
      maxOutputTokens: 4096,
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
    },
  });

export async function firstDurableRun(llm: LlmAdapter = reasoningModel()) {
  const agent = defineAgent({
    name: 'support',
    instructions: 'Answer support questions. Look orders up before answering.',
    tools: {
      getOrder: tool({
        description: 'Reads an order by id',
        input: z.object({ orderId: z.string() }),
        safeToRetry: true, // a read: re-running it after a crash is harmless
        handler: async ({ orderId }) => ({ orderId, status: 'shipped' }),
      }),
    },
  });

  const store = sqliteStore({ path: 'agent.db' });
  try {
    // The same sessionId resumes the same conversation, in this process or the next one.
    const result = await run(agent, {
      store,
      sessionId: 'customer-17:ticket-4',
      ownerId: 'customer-17',
      message: 'Where is order 9?',
      // The id of this user turn (e.g. your request id): a rerun after a crash stores it once,
      // where a rerun without it would append the same question a second time.
      messageId: 'request-5f1c',
      llm,
    });
    return result.response;
  } finally {
    await store.close();
  }
}
