import type { LlmResponse } from './llm.ts';
import type { MessageRecord, ToolCall } from './records.ts';

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
  for (const m of history) for (const call of m.toolCalls ?? []) used.add(call.id);
  return {
    assign(calls, assistantId) {
      return calls.map((call, i) => {
        const provided =
          typeof call.id === 'string' && call.id.length > 0 && !used.has(call.id) ? call.id : null;
        const id = provided ?? `call_${assistantId}_${i}`;
        used.add(id);
        return { id, name: call.name, input: call.input };
      });
    },
  };
}
