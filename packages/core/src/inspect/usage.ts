import type { Usage } from '../llm.ts';
import type { ModelCallUsage } from '../message-parts.ts';
import type { MessageRecord } from '../records.ts';

/** One model call's usage, by the assistant message it produced. */
export interface StepUsage {
  seq: number;
  messageId: string;
  usage: ModelCallUsage;
}

export interface SessionUsage {
  /** Every model call recorded in the messages, in seq order. */
  steps: StepUsage[];
  /** Their sum. */
  total: Required<Usage>;
}

/**
 * Usage per model call and per session, from the messages alone: each call's usage is committed
 * with the assistant message it produced, so a replayed step is never counted twice. Messages
 * written before usage was recorded per call contribute nothing here (the session state's running
 * total still counts them).
 */
export function sessionUsage(messages: readonly MessageRecord[]): SessionUsage {
  const total: Required<Usage> = {
    inputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
  };
  const steps: StepUsage[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || m.usage === undefined) continue;
    steps.push({ seq: m.seq, messageId: m.id, usage: m.usage });
    for (const key of Object.keys(total) as (keyof Usage)[]) total[key] += m.usage[key] ?? 0;
  }
  return { steps, total };
}
