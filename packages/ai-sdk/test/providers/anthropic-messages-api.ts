import {
  EndpointRefusal,
  isBase64,
  isHttpUrl,
  jsonResponse,
  type ProviderEndpoint,
  type RecordedFile,
  type RecordedRequest,
  recordingFetch,
  sameJson,
} from './endpoint-kit.ts';

// A local stand-in for Anthropic's Messages API (`POST /v1/messages`, non-streaming) that
// enforces the extended-thinking rules the real API enforces (see README.md in this folder):
// with thinking on, the assistant message holding the latest tool_use must start with the
// thinking / redacted_thinking blocks exactly as this endpoint returned them, signatures byte
// for byte. Signatures and redacted data are opaque tokens the endpoint mints and remembers.

export type AnthropicBlock = Record<string, unknown>;

export const thinking = (text: string, signature: string): AnthropicBlock => ({
  type: 'thinking',
  thinking: text,
  signature,
});
export const redactedThinking = (data: string): AnthropicBlock => ({ type: 'redacted_thinking', data });
export const toolUse = (id: string, name: string, input: unknown): AnthropicBlock => ({
  type: 'tool_use',
  id,
  name,
  input,
});
export const text = (value: string): AnthropicBlock => ({ type: 'text', text: value });

export interface AnthropicEndpoint extends ProviderEndpoint {}

export interface AnthropicEndpointOptions {
  /** The `usage` object of every answer, passed through as is. */
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
}

const THINKING_ON = new Set(['enabled', 'adaptive', 'between_tools']);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const isReasoning = (block: AnthropicBlock) =>
  block.type === 'thinking' || block.type === 'redacted_thinking';
// biome-ignore lint/suspicious/noExplicitAny: raw request JSON
type Json = any;

const refuse = (message: string, status = 400, type = 'invalid_request_error'): never => {
  throw new EndpointRefusal(status, { type: 'error', error: { type, message } });
};

/** The real API's wording for a tool-use cycle whose thinking block is missing. */
export const missingThinkingMessage = (index: number, found: string) =>
  `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. ` +
  'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the ' +
  'lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous ' +
  'turns. To avoid this requirement, disable `thinking`. Please consult our documentation at ' +
  'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

const modifiedMessage = (at: string) =>
  `${at}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. ` +
  'These blocks must remain as they were in the original response.';

/**
 * `reply` picks the content blocks of each answer from the request body. Thinking blocks in a
 * reply are sent only when the request enabled thinking, as the real API does.
 */
export function startAnthropicMessagesApi(
  reply: (body: Json) => AnthropicBlock[],
  options: AnthropicEndpointOptions = {},
): AnthropicEndpoint {
  const usage = options.usage ?? { input_tokens: 40, output_tokens: 8 };
  const requests: RecordedRequest[] = [];
  const files: RecordedFile[] = [];
  // Every reasoning block returned, by signature / redacted data: a block sent back must be one.
  const issuedThinking = new Map<string, string>();
  const issuedRedacted = new Set<string>();
  // tool_use id -> the reasoning blocks of the response that produced it, in order.
  const reasoningOfToolUse = new Map<string, AnthropicBlock[]>();

  const checkFiles = (body: Json, request: number) => {
    body.messages.forEach((message: Json, i: number) => {
      if (message.role !== 'user' || !Array.isArray(message.content)) return;
      message.content.forEach((block: Json, j: number) => {
        const at = `messages.${i}.content.${j}`;
        if (block.type !== 'image' && block.type !== 'document') return;
        const source = block.source ?? {};
        if (block.type === 'image') {
          if (source.type === 'base64') {
            if (!IMAGE_TYPES.has(source.media_type))
              refuse(
                `${at}.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
              );
            if (!isBase64(source.data)) refuse(`${at}.source.data: The image data is not valid base64`);
          } else if (source.type === 'url') {
            if (!isHttpUrl(source.url)) refuse(`${at}.source.url: Input should be a valid URL`);
          } else if (source.type !== 'file')
            refuse(`${at}.source.type: unknown image source \`${source.type}\``);
        } else if (source.type === 'base64') {
          if (source.media_type !== 'application/pdf')
            refuse(`${at}.source.media_type: Input should be 'application/pdf'`);
          if (!isBase64(source.data)) refuse(`${at}.source.data: The PDF data is not valid base64`);
        } else if (source.type === 'url') {
          if (!isHttpUrl(source.url)) refuse(`${at}.source.url: Input should be a valid URL`);
        } else if (source.type !== 'text' && source.type !== 'file' && source.type !== 'content')
          refuse(`${at}.source.type: unknown document source \`${source.type}\``);
        files.push({ request, path: `messages[${i}].content[${j}]`, part: block });
      });
    });
  };

  /** Every reasoning block sent back must be one this endpoint returned, unaltered. */
  const checkSignatures = (messages: Json[]) => {
    messages.forEach((message, i) => {
      if (message.role !== 'assistant' || !Array.isArray(message.content)) return;
      message.content.forEach((block: Json, j: number) => {
        const at = `messages.${i}.content.${j}`;
        if (block.type === 'thinking') {
          const issued = issuedThinking.get(block.signature);
          if (issued === undefined) refuse(`${at}: Invalid \`signature\` in \`thinking\` block`);
          if (issued !== block.thinking) refuse(modifiedMessage(at));
        } else if (block.type === 'redacted_thinking' && !issuedRedacted.has(block.data)) {
          refuse(modifiedMessage(at));
        }
      });
    });
  };

  /** The rule of the current tool-use cycle (the last assistant message with tool_use). */
  const checkToolUseCycle = (messages: Json[], thinkingOn: boolean) => {
    const index = messages.findLastIndex((message) => message.role === 'assistant');
    if (index < 0) return;
    const content: AnthropicBlock[] = Array.isArray(messages[index].content)
      ? messages[index].content
      : [{ type: 'text', text: messages[index].content }];
    const uses = content.filter((block) => block.type === 'tool_use');
    if (uses.length === 0) return;
    const next = messages[index + 1];
    const answered = new Set(
      Array.isArray(next?.content)
        ? next.content.filter((b: Json) => b.type === 'tool_result').map((b: Json) => b.tool_use_id)
        : [],
    );
    const unanswered = uses.filter((use) => !answered.has(use.id)).map((use) => use.id);
    if (unanswered.length > 0)
      refuse(
        `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
          `${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    if (!thinkingOn) return;
    if (!isReasoning(content[0]!)) refuse(missingThinkingMessage(index, String(content[0]!.type)));
    const issued = reasoningOfToolUse.get(String(uses[0]!.id));
    const sent = content.filter(isReasoning);
    if (issued !== undefined && !sameJson(sent, issued)) refuse(modifiedMessage(`messages.${index}.content`));
  };

  const fetch = recordingFetch(requests, (request, requestIndex) => {
    if (request.method !== 'POST' || request.path !== '/v1/messages')
      refuse(`No route for ${request.method} ${request.path}`, 404, 'not_found_error');
    if (!request.headers['x-api-key']) refuse('x-api-key header is required', 401, 'authentication_error');
    if (!request.headers['anthropic-version']) refuse('anthropic-version: header is required');
    const body = request.body;
    if (body.stream === true) refuse('this local endpoint answers non-streaming requests only');
    if (typeof body.max_tokens !== 'number') refuse('max_tokens: Field required');
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      refuse('messages: at least one message is required');
    const thinkingOn = THINKING_ON.has(body.thinking?.type);
    if (
      body.thinking?.type === 'enabled' &&
      (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool')
    )
      refuse('Thinking may not be enabled when tool_choice forces tool use.');
    if (body.thinking?.type === 'enabled') {
      const budget = body.thinking.budget_tokens;
      if (typeof budget !== 'number' || budget < 1024)
        refuse('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (body.max_tokens <= budget)
        refuse(
          '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
        );
    }
    checkFiles(body, requestIndex);
    checkSignatures(body.messages);
    checkToolUseCycle(body.messages, thinkingOn);

    const content = reply(body).filter((block) => thinkingOn || !isReasoning(block));
    const reasoning = content.filter(isReasoning);
    for (const block of reasoning) {
      if (block.type === 'thinking') issuedThinking.set(String(block.signature), String(block.thinking));
      else issuedRedacted.add(String(block.data));
    }
    for (const block of content)
      if (block.type === 'tool_use') reasoningOfToolUse.set(String(block.id), reasoning);
    return jsonResponse(
      200,
      {
        id: `msg_${String(requestIndex + 1).padStart(4, '0')}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content,
        stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage,
      },
      { 'request-id': `req_${requestIndex + 1}` },
    );
  });
  return { fetch, requests, files };
}
