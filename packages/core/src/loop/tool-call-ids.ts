import { APPROVAL_REQUESTED } from '../inspect/session-fold.ts';
import type { LlmResponse } from '../llm.ts';
import type { MessageRecord, ToolCall } from '../records.ts';
import { MAX_MESSAGE_ID_BYTES, validateIdentifier } from '../store/validation.ts';

function requestedIds(content: string): string[] {
  try {
    const ids = (JSON.parse(content) as { toolCallIds?: unknown } | null)?.toolCallIds;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

/** A provider id the store boundary would refuse (too long, NUL, lone surrogate) is replaced, never stored. */
function storable(id: string): boolean {
  try {
    validateIdentifier(id, 'toolCalls[].id', MAX_MESSAGE_ID_BYTES);
    return true;
  } catch {
    return false;
  }
}

export interface ToolCallIds {
  /**
   * Gives every call of a model response an id that is unique in its session before write #1
   * stores it, and remembers the ids it hands out.
   */
  assign(calls: LlmResponse['toolCalls'], assistantId: string): ToolCall[];
}

/**
 * The session's tool-call ids, collected once from the stored history and kept up to date by
 * `assign` (every new call of the run passes through it), so a step costs the same however long
 * the session is. A provider id is kept unless it is missing, empty, repeated within the
 * response, or already used earlier in the session (some OpenAI-compatible servers send `call_0`
 * every turn): those get `call_<assistant message id>_<index>`, fixed by the stored assistant
 * message and unique across sessions, so idempotency keys derived from them never collide.
 */
export function toolCallIds(history: readonly MessageRecord[]): ToolCallIds {
  const used = new Set<string>();
  for (const m of history) {
    for (const call of m.toolCalls ?? []) used.add(call.id);
    // An approval request can outlive the call it was written for (a split write #1 that crashed
    // before the assistant message): a new call reusing its id would be taken to await approval.
    if (m.kind === APPROVAL_REQUESTED) for (const id of requestedIds(m.content)) used.add(id);
  }
  return {
    assign(calls, assistantId) {
      return calls.map((call, i) => {
        const provided =
          typeof call.id === 'string' && storable(call.id) && !used.has(call.id) ? call.id : null;
        const id = provided ?? `call_${assistantId}_${i}`;
        used.add(id);
        return { id, name: call.name, input: call.input };
      });
    },
  };
}
