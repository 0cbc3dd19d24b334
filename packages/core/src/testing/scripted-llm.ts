import type { LlmAdapter, LlmMessage, LlmResponse } from '../llm.ts';

export type ScriptStep = Partial<LlmResponse> | ((messages: LlmMessage[]) => Partial<LlmResponse>);

export interface ScriptedLlm extends LlmAdapter {
  /** Every request the model received, in order. */
  readonly requests: LlmMessage[][];
}

/**
 * A deterministic model. The step it answers with is picked by how many assistant messages the
 * conversation already holds, not by how often it was called, so a resumed run after a crash
 * gets the same answer the crashed one would have.
 */
export function scriptedLlm(steps: ScriptStep[]): ScriptedLlm {
  const requests: LlmMessage[][] = [];
  return {
    requests,
    async generate({ messages, signal }) {
      signal.throwIfAborted();
      requests.push(messages);
      const index = messages.filter((m) => m.role === 'assistant').length;
      const step = steps[index];
      if (step === undefined) {
        throw new Error(`scriptedLlm: no step ${index} (the script has ${steps.length})`);
      }
      const answer = typeof step === 'function' ? step(messages) : step;
      return {
        text: answer.text ?? '',
        toolCalls: answer.toolCalls ?? [],
        usage: answer.usage ?? { inputTokens: 10, outputTokens: 5 },
      };
    },
  };
}

/** A model that must not be called: proves a run was answered from the store alone. */
export function unreachableLlm(): LlmAdapter {
  return {
    async generate() {
      throw new Error('unreachableLlm: the model was called');
    },
  };
}
