import {
  type AgentStore,
  foldSession,
  type MessageRecord,
  type SessionRecord,
  type ToolCall,
} from '@agentstore/core';

/**
 * What an operator sees first about a session. `running`: an unexpired lease is held (by this
 * process's clock). Without one: `complete` (the last answer stands), `awaiting-approval`,
 * `interrupted` (calls of the last step have no result: a crash; the next run resolves them),
 * `failed` (the run stopped before the model answered: a model or store error, or a crash between
 * steps; the next run continues), `empty`.
 */
export type SessionStatus = 'running' | 'awaiting-approval' | 'complete' | 'interrupted' | 'failed' | 'empty';

export const SESSION_STATUSES: readonly SessionStatus[] = [
  'running',
  'awaiting-approval',
  'complete',
  'interrupted',
  'failed',
  'empty',
];

export interface StatusView {
  status: SessionStatus;
  /** What the messages alone say (the status without the lease). */
  logStatus: SessionStatus;
  interruptedCallIds: string[];
  awaitingApprovalCallIds: string[];
  /** The final answer when complete, clipped. */
  response: string | null;
}

const FIRST_TAIL = 32;

const INTERNAL = new Set(['approval-requested', 'approval-decided']);

/** The index of the last message that decides the status (not a tool result, not bookkeeping). */
function lastDecidingIndex(messages: MessageRecord[]): number {
  let i = messages.length - 1;
  while (i >= 0 && (messages[i]!.role === 'tool' || INTERNAL.has(messages[i]!.kind ?? ''))) i--;
  return i;
}

/**
 * The session's messages from its last deciding message to `upToSeq`: the status depends only on
 * the last step, so this reads a tail of the log (32 messages, doubling while the step is longer)
 * instead of the whole session. One `load` per try, each bounded by `afterSeq`.
 */
export async function loadLastStep(
  store: AgentStore,
  session: SessionRecord,
  upToSeq: number,
): Promise<MessageRecord[]> {
  let window = FIRST_TAIL;
  for (;;) {
    const afterSeq = Math.max(0, upToSeq - window);
    const loaded = await store.load(session.id, { afterSeq });
    if (!loaded) return [];
    const messages = loaded.messages.filter((m) => m.seq <= upToSeq);
    const index = lastDecidingIndex(messages);
    if (index >= 0 || afterSeq === 0) return messages.slice(Math.max(0, index));
    window *= 2;
  }
}

/** The status of `session` as of `upToSeq` (its head unless viewing the past). */
export function statusOf(
  session: SessionRecord,
  lastStep: MessageRecord[],
  options: { now: number; asOf: boolean },
): StatusView {
  const folded = foldSession(lastStep, { headSeq: lastStep.at(-1)?.seq ?? 0 });
  const logStatus: SessionStatus =
    folded.status === 'awaiting-model' ? 'failed' : folded.status === 'empty' ? 'empty' : folded.status;
  const leaseLive =
    !options.asOf && session.lease !== null && Date.parse(session.lease.expiresAt) > options.now;
  const ids = (calls: ToolCall[]) => calls.map((c) => c.id);
  return {
    status: leaseLive ? 'running' : logStatus,
    logStatus,
    interruptedCallIds: ids(folded.interruptedCalls),
    awaitingApprovalCallIds: ids(folded.awaitingApproval),
    response: folded.response === null ? null : folded.response.slice(0, 500),
  };
}
