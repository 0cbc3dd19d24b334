// examples/src/docs/reasoning-model.ts

import { fromAiSdk } from '@agentstore/ai-sdk';
import { type AgentDefinition, type AgentStore, run } from '@agentstore/core';
import { anthropic } from '@ai-sdk/anthropic';

export async function askWithInvoice(agent: AgentDefinition, store: AgentStore, invoicePdf: Uint8Array) {
  // Extended thinking: the signed thinking blocks are stored with the turn and sent back on the
  // next call, as Anthropic requires, also after a crash.
  const llm = fromAiSdk(anthropic('claude-sonnet-4-5'), {
    settings: {
      maxOutputTokens: 4096,
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
    },
  });
  return run(agent, {
    store,
    sessionId: 'ticket-42',
    llm,
    message: [
      { type: 'text', text: 'Why was this customer charged twice?' },
      { type: 'file', mediaType: 'application/pdf', data: invoicePdf, filename: 'invoice.pdf' },
    ],
  });
}
