// examples/src/docs/resume-after-crash.ts
import { type AgentDefinition, type AgentStore, type LlmAdapter, run } from '@agentstore/core';

export async function resumeAfterCrash(
  agent: AgentDefinition,
  store: AgentStore,
  sessionId: string,
  llm: LlmAdapter,
) {
  // Waits up to 35 s for a crashed worker's lease to lapse (a released lease is taken at once).
  return run(agent, { store, sessionId, llm, leaseWaitMs: 35_000 });
}
