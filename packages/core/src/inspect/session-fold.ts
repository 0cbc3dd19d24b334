import type { MessageRecord, SessionRecord, ToolCall } from '../records.ts';

/** Kinds of the loop's own bookkeeping messages: stored and replayed, never shown to the model. */
export const APPROVAL_REQUESTED = 'approval-requested';
export const APPROVAL_DECIDED = 'approval-decided';
export const INTERNAL_KINDS: ReadonlySet<string> = new Set([APPROVAL_REQUESTED, APPROVAL_DECIDED]);

export interface ApprovalDecisionRecord {
  toolCallId: string;
  approve: boolean;
  reason?: string;
}

export interface FoldedSession {
  /**
   * `complete`: the last answer stands. `awaiting-approval`: calls wait for a human decision.
   * `interrupted`: calls lack results (a crash). `awaiting-model`: the model speaks next.
   */
  status: 'empty' | 'complete' | 'awaiting-approval' | 'interrupted' | 'awaiting-model';
  /** The final answer when complete. */
  response: string | null;
  /** Calls of the last step with no result that are not waiting for approval. */
  interruptedCalls: ToolCall[];
  /** Calls of the last step waiting for a decision. */
  awaitingApproval: ToolCall[];
  /** Every approval decision recorded in the session. */
  decisions: ApprovalDecisionRecord[];
  headSeq: number;
  /** Every tool call of the session with its result message (null while it has none). */
  toolCalls: { call: ToolCall; assistantSeq: number; result: MessageRecord | null }[];
}

const parse = (content: string): unknown => {
  try {
    return JSON.parse(content);
  } catch {
    return null;
  }
};

/** Pure replay of a session's messages into the state the loop and the inspector act on. */
export function foldSession(
  messages: MessageRecord[],
  session?: Pick<SessionRecord, 'headSeq'>,
): FoldedSession {
  const headSeq = session?.headSeq ?? messages.at(-1)?.seq ?? 0;
  const results = new Map<string, MessageRecord>();
  for (const m of messages) if (m.role === 'tool' && m.toolCallId !== undefined) results.set(m.toolCallId, m);
  const toolCalls = messages.flatMap((m) =>
    (m.toolCalls ?? []).map((call) => ({ call, assistantSeq: m.seq, result: results.get(call.id) ?? null })),
  );

  const requested = new Set<string>();
  const decisions: ApprovalDecisionRecord[] = [];
  for (const m of messages) {
    if (m.kind !== APPROVAL_REQUESTED && m.kind !== APPROVAL_DECIDED) continue;
    const body = parse(m.content) as { toolCallIds?: string[] } & Partial<ApprovalDecisionRecord>;
    if (m.kind === APPROVAL_REQUESTED) for (const id of body?.toolCallIds ?? []) requested.add(id);
    else if (typeof body?.toolCallId === 'string') {
      decisions.push({
        toolCallId: body.toolCallId,
        approve: body.approve === true,
        ...(body.reason ? { reason: body.reason } : {}),
      });
    }
  }

  let index = messages.length - 1;
  while (index >= 0 && (messages[index]!.role === 'tool' || INTERNAL_KINDS.has(messages[index]!.kind ?? '')))
    index--;
  const last = messages[index];
  const base = { headSeq, toolCalls, interruptedCalls: [], awaitingApproval: [], decisions };
  if (!last) return { ...base, status: messages.length ? 'awaiting-model' : 'empty', response: null };
  if (last.role === 'assistant' && !last.toolCalls?.length)
    return { ...base, status: 'complete', response: last.content };
  if (last.role !== 'assistant') return { ...base, status: 'awaiting-model', response: null };

  const decided = new Set(decisions.map((d) => d.toolCallId));
  const open = last.toolCalls!.filter((call) => !results.has(call.id));
  const awaitingApproval = open.filter((call) => requested.has(call.id) && !decided.has(call.id));
  const interruptedCalls = open.filter((call) => !awaitingApproval.includes(call));
  const status = awaitingApproval.length
    ? 'awaiting-approval'
    : interruptedCalls.length
      ? 'interrupted'
      : 'awaiting-model';
  return { ...base, status, response: null, interruptedCalls, awaitingApproval };
}
