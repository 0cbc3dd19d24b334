import type { LlmAdapter, LlmMessage, LlmToolSpec } from '@agentstore/core';

/**
 * A minimal `LlmAdapter` for any OpenAI-compatible chat completions endpoint (OpenAI, Workers AI,
 * Groq, a local server…), using only `fetch`. `@agentstore/ai-sdk`'s `fromAiSdk(model)` is the
 * richer alternative if you already use the Vercel AI SDK.
 */
export interface ChatCompletionsOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
}

interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface ChatCompletion {
  choices: { message: { content: string | null; tool_calls?: ChatToolCall[] } }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

const toChatMessage = (m: LlmMessage) => {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if (m.role === 'assistant' && m.toolCalls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.input) },
      })),
    };
  }
  return { role: m.role, content: m.content };
};

/** Tool schemas go out as JSON Schema, through Standard JSON Schema (zod 4, valibot, arktype). */
const toChatTool = (spec: LlmToolSpec) => {
  const converter = (spec.input['~standard'] as { jsonSchema?: { input(o: { target: string }): unknown } })
    .jsonSchema;
  if (!converter) throw new Error(`tool ${spec.name}: its schema cannot be converted to JSON Schema`);
  return {
    type: 'function',
    function: {
      name: spec.name,
      description: spec.description,
      parameters: converter.input({ target: 'draft-07' }),
    },
  };
};

export function chatCompletionsLlm(options: ChatCompletionsOptions): LlmAdapter {
  return {
    async generate({ system, messages, tools, signal }) {
      const response = await fetch(`${options.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
        body: JSON.stringify({
          model: options.model,
          messages: [{ role: 'system', content: system }, ...messages.map(toChatMessage)],
          ...(tools.length ? { tools: tools.map(toChatTool) } : {}),
        }),
        signal,
      });
      if (!response.ok)
        throw new Error(`model call failed: HTTP ${response.status} ${await response.text()}`);
      const completion = (await response.json()) as ChatCompletion;
      const message = completion.choices[0]?.message;
      if (!message) throw new Error('model call returned no choice');
      return {
        text: message.content ?? '',
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          input: JSON.parse(call.function.arguments || '{}'),
        })),
        usage: {
          inputTokens: completion.usage?.prompt_tokens ?? 0,
          outputTokens: completion.usage?.completion_tokens ?? 0,
        },
      };
    },
  };
}
