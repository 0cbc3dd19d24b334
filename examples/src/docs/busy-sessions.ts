// examples/src/docs/busy-sessions.ts
import {
  type AgentDefinition,
  type AgentStore,
  isAgentStoreError,
  type LlmAdapter,
  run,
} from '@agentstore/core';

/** One HTTP request = one run. A second request for a session that is still running gets a 409. */
export async function handleMessage(
  agent: AgentDefinition,
  store: AgentStore,
  llm: LlmAdapter,
  request: { sessionId: string; userId: string; text: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const result = await run(agent, {
      store,
      llm,
      sessionId: request.sessionId,
      ownerId: request.userId,
      message: request.text,
      // Wait a little for a crashed worker's lease to expire before giving up.
      leaseWaitMs: 2_000,
    });
    return { status: 200, body: { answer: result.response, status: result.status } };
  } catch (error) {
    if (isAgentStoreError(error, 'SESSION_BUSY')) {
      return { status: 409, body: { error: error.code, retryAfterMs: error.retryAfterMs } };
    }
    throw error;
  }
}
