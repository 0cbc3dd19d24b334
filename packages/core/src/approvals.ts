import { ApprovalRequiredError, InvalidApprovalError } from './errors.ts';
import type { NewMessage, ToolCall } from './records.ts';
import { APPROVAL_DECIDED, APPROVAL_REQUESTED, type FoldedSession } from './session-fold.ts';
import { type CallScope, resultMessage } from './tool-results.ts';

/** A human's answer to a call that waits for approval. */
export type ApprovalDecision = { approve: true } | { approve: false; reason?: string };

export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  input: ToolCall['input'];
}

const now = () => new Date().toISOString();

export const toPendingApproval = (call: ToolCall): PendingApproval => ({
  toolCallId: call.id,
  toolName: call.name,
  input: call.input,
});

/** The bookkeeping message that records which calls wait for a human; lands with write #1. */
export function approvalRequestMessage(scope: CallScope, calls: ToolCall[]): NewMessage {
  return {
    id: scope.newId(),
    role: 'system',
    kind: APPROVAL_REQUESTED,
    content: JSON.stringify({ toolCallIds: calls.map((c) => c.id) }),
    createdAt: now(),
  };
}

/**
 * Checks the caller's decisions against what the session waits for. Every waiting call needs a
 * decision; a decision for a call already decided or not waiting is refused. Nothing is written.
 */
export function checkDecisions(
  sessionId: string,
  folded: FoldedSession,
  decisions: Record<string, ApprovalDecision>,
): void {
  const waiting = new Set(folded.awaitingApproval.map((c) => c.id));
  const decided = new Set(folded.toolCalls.filter((t) => t.result).map((t) => t.call.id));
  for (const d of folded.decisions) decided.add(d.toolCallId);
  for (const toolCallId of Object.keys(decisions)) {
    if (waiting.has(toolCallId)) continue;
    const reason = decided.has(toolCallId) ? 'already-decided' : 'unknown-call';
    throw new InvalidApprovalError({ sessionId, toolCallId, reason });
  }
  const missing = [...waiting].filter((id) => !(id in decisions));
  if (missing.length) throw new ApprovalRequiredError({ sessionId, toolCallIds: missing });
}

/**
 * One append's worth of messages: each decision, and for each rejection the call's result, so a
 * rejected call is answered in the same atomic write that records the rejection.
 */
export function decisionMessages(
  scope: CallScope,
  calls: ToolCall[],
  decisions: Record<string, ApprovalDecision>,
): NewMessage[] {
  return calls.flatMap((call) => {
    const decision = decisions[call.id]!;
    const reason = decision.approve ? undefined : decision.reason;
    const record: NewMessage = {
      id: scope.newId(),
      role: 'system',
      kind: APPROVAL_DECIDED,
      content: JSON.stringify({
        toolCallId: call.id,
        approve: decision.approve,
        ...(reason ? { reason } : {}),
      }),
      createdAt: now(),
    };
    if (decision.approve) return [record];
    const rejection = { error: 'The user rejected this tool call', ...(reason ? { reason } : {}) };
    return [record, resultMessage(scope, call, rejection, 'tool-approval-rejected')];
  });
}
