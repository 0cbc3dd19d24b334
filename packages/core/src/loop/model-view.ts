import { INTERNAL_KINDS } from '../inspect/session-fold.ts';
import type { LlmMessage } from '../llm.ts';
import type { NewMessage } from '../records.ts';

/** The conversation as the model sees it, kept in step with the session instead of rebuilt per call. */
export interface ModelView {
  /** Adds messages in stored order; the loop's own bookkeeping messages are left out. */
  add(messages: readonly NewMessage[]): void;
  /**
   * A fresh array for one model request, ending with `extra` (not yet stored). Its elements are
   * shared with earlier requests (one conversion per message, ever); the array itself is the
   * caller's, so a model that keeps it keeps exactly what it was sent.
   */
  request(extra?: readonly NewMessage[]): LlmMessage[];
}

export const toLlmMessage = ({
  role,
  content,
  toolCalls,
  toolCallId,
  toolName,
  kind,
  parts,
}: NewMessage): LlmMessage => ({
  role,
  content,
  ...(toolCalls ? { toolCalls } : {}),
  ...(toolCallId !== undefined ? { toolCallId } : {}),
  ...(toolName !== undefined ? { toolName } : {}),
  ...(kind !== undefined ? { kind } : {}),
  ...(parts !== undefined ? { parts } : {}),
});

export function modelView(history: readonly NewMessage[] = []): ModelView {
  const seen: LlmMessage[] = [];
  const add = (messages: readonly NewMessage[]) => {
    for (const m of messages) if (!INTERNAL_KINDS.has(m.kind ?? '')) seen.push(toLlmMessage(m));
  };
  add(history);
  return {
    add,
    request(extra = []) {
      const request = seen.slice();
      for (const m of extra) if (!INTERNAL_KINDS.has(m.kind ?? '')) request.push(toLlmMessage(m));
      return request;
    },
  };
}
