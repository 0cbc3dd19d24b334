import { ApprovalRequiredError, InvalidApprovalError, InvalidArgumentError } from '../errors.ts';
import { APPROVAL_DECIDED, APPROVAL_REQUESTED, type FoldedSession } from '../inspect/session-fold.ts';
import type { NewMessage, ToolCall } from '../records.ts';
import { isWellFormedText } from '../store/json-boundary.ts';
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

/** Call ids per request message: 900 ids of at most 256 bytes stay under the kit's 256 KiB floor. */
const IDS_PER_REQUEST = 900;

/** The bookkeeping messages that record which calls wait for a human; they land with write #1. */
export function approvalRequestMessages(scope: CallScope, calls: ToolCall[]): NewMessage[] {
  const requests: NewMessage[] = [];
  for (let i = 0; i < calls.length; i += IDS_PER_REQUEST) {
    requests.push({
      id: scope.newId(),
      role: 'system',
      kind: APPROVAL_REQUESTED,
      content: JSON.stringify({ toolCallIds: calls.slice(i, i + IDS_PER_REQUEST).map((c) => c.id) }),
      createdAt: now(),
    });
  }
  return requests;
}

/**
 * Checks the caller's decisions against what the session waits for, and returns the ones to
 * record. Every waiting call needs a decision. Repeating a decision already recorded (a retried
 * request after a crash) is accepted and changes nothing; a different decision for a decided
 * call, or a decision for a call that awaits none, is refused. Nothing is written here.
 */
export function checkDecisions(
  sessionId: string,
  folded: FoldedSession,
  decisions: Record<string, ApprovalDecision>,
): Record<string, ApprovalDecision> {
  const waiting = new Set(folded.awaitingApproval.map((c) => c.id));
  const recorded = new Map(folded.decisions.map((d) => [d.toolCallId, d.approve]));
  const answered = new Set(folded.toolCalls.filter((t) => t.result).map((t) => t.call.id));
  const fresh: Record<string, ApprovalDecision> = {};
  for (const [toolCallId, decision] of Object.entries(decisions)) {
    // Read once into a plain copy: what is recorded and what decides whether the handler runs
    // must be the same value, even for a getter or a Proxy that answers differently each time.
    const approve: unknown = decision?.approve;
    const note: unknown = (decision as { reason?: unknown } | undefined)?.reason;
    if (typeof approve !== 'boolean') {
      throw new InvalidArgumentError({
        argument: `approvals[${JSON.stringify(toolCallId)}].approve`,
        reason: 'must be a boolean',
      });
    }
    if (note !== undefined && (typeof note !== 'string' || !isWellFormedText(note))) {
      throw new InvalidArgumentError({
        argument: `approvals[${JSON.stringify(toolCallId)}].reason`,
        reason: 'must be a well-formed string',
      });
    }
    if (waiting.has(toolCallId)) {
      fresh[toolCallId] = (note === undefined ? { approve } : { approve, reason: note }) as ApprovalDecision;
      continue;
    }
    if (recorded.get(toolCallId) === approve) continue; // the same decision again: a retry
    const reason = recorded.has(toolCallId) || answered.has(toolCallId) ? 'already-decided' : 'unknown-call';
    throw new InvalidApprovalError({ sessionId, toolCallId, reason });
  }
  const missing = [...waiting].filter((id) => !Object.hasOwn(fresh, id));
  if (missing.length) throw new ApprovalRequiredError({ sessionId, toolCallIds: missing });
  return fresh;
}

/**
 * Each decision as a unit of messages that must land in one append: the decision, and for a
 * rejection the call's result too, so a rejected call is answered in the write that records it.
 */
export function decisionMessages(
  scope: CallScope,
  calls: ToolCall[],
  decisions: Record<string, ApprovalDecision>,
): NewMessage[][] {
  return calls.map((call) => {
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
    return [
      record,
      resultMessage(scope, call, rejection, { via: 'rejected', attempt: 0 }, 'tool-approval-rejected'),
    ];
  });
}
