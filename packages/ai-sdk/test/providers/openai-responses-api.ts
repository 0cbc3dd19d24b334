import {
  EndpointRefusal,
  isBase64,
  isHttpUrl,
  jsonResponse,
  type ProviderEndpoint,
  type RecordedFile,
  type RecordedRequest,
  recordingFetch,
} from './endpoint-kit.ts';

// A local stand-in for OpenAI's Responses API (`POST /v1/responses`, non-streaming) that
// enforces the reasoning-item rules of stateless use (see README.md in this folder): with
// `store: false` nothing is kept server-side, so an item can only come back in full; a
// function_call this endpoint returned after a reasoning item must come back preceded by that
// reasoning item (same id, same encrypted_content), else HTTP 400. encrypted_content is returned
// only when the request asked for it with `include: ['reasoning.encrypted_content']`.

export type ResponsesItem = Record<string, unknown>;

export const reasoning = (id: string, encryptedContent: string, summary: string[] = []): ResponsesItem => ({
  type: 'reasoning',
  id,
  encrypted_content: encryptedContent,
  summary: summary.map((text) => ({ type: 'summary_text', text })),
});
export const functionCall = (callId: string, name: string, args: unknown): ResponsesItem => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
});
export const message = (text: string, id = 'msg_1'): ResponsesItem => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

export interface OpenAIEndpoint extends ProviderEndpoint {}

export interface OpenAIEndpointOptions {
  /** Token counts of every answer; the details objects are built from them. */
  usage?: { input_tokens: number; output_tokens: number; reasoning_tokens?: number; cached_tokens?: number };
}

// biome-ignore lint/suspicious/noExplicitAny: raw request JSON
type Json = any;

const refuse = (
  message: string,
  status = 400,
  code: string | null = null,
  param: string | null = 'input',
): never => {
  throw new EndpointRefusal(status, {
    error: { message, type: 'invalid_request_error', param, code },
  });
};

/** The real API's wording for a function_call replayed without the reasoning item before it. */
export const missingReasoningMessage = (functionCallId: string, reasoningId: string) =>
  `Item '${functionCallId}' of type 'function_call' was provided without its required 'reasoning' item: '${reasoningId}'.`;

export const notPersistedMessage = (id: string) =>
  `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. ` +
  'Try again with `store` set to true, or remove this item from your input.';

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
// Items of one response that may sit between a reasoning item and the call it led to.
const SAME_RESPONSE = new Set(['reasoning', 'function_call', 'item_reference']);
const sameResponse = (item: Json) =>
  item.role === 'assistant' || (item.role === undefined && SAME_RESPONSE.has(item.type));

/** `reply` picks the output items of each answer from the request body. */
export function startOpenAIResponsesApi(
  reply: (body: Json) => ResponsesItem[],
  options: OpenAIEndpointOptions = {},
): OpenAIEndpoint {
  const {
    reasoning_tokens = 0,
    cached_tokens = 0,
    ...usage
  } = options.usage ?? { input_tokens: 40, output_tokens: 8 };
  const requests: RecordedRequest[] = [];
  const files: RecordedFile[] = [];
  const issuedReasoning = new Map<string, string>(); // reasoning id -> encrypted_content
  const issuedItems = new Set<string>(); // every output item id (what `store: true` keeps)
  const reasoningOfCall = new Map<string, string>(); // call_id -> id of the reasoning before it

  const checkFiles = (input: Json[], request: number) => {
    input.forEach((item, i) => {
      if (item.role !== 'user' || !Array.isArray(item.content)) return;
      item.content.forEach((part: Json, j: number) => {
        const at = `input[${i}].content[${j}]`;
        if (part.type === 'input_image') {
          const url = part.image_url;
          if (part.file_id === undefined && url === undefined)
            refuse(`Missing required parameter: '${at}.image_url'.`);
          if (url !== undefined) {
            const data = DATA_URL.exec(url);
            if (data ? !IMAGE_TYPES.has(data[1]!) || !isBase64(data[2]) : !isHttpUrl(url))
              refuse(
                `Invalid '${at}.image_url'. Expected a base64-encoded data URL with an image MIME type or a valid URL.`,
                400,
                'invalid_value',
              );
          }
        } else if (part.type === 'input_file') {
          if (part.file_data !== undefined) {
            const data = DATA_URL.exec(part.file_data);
            if (!data || !isBase64(data[2]))
              refuse(`Invalid '${at}.file_data'. Expected a base64-encoded data URL.`, 400, 'invalid_value');
            if (typeof part.filename !== 'string') refuse(`Missing required parameter: '${at}.filename'.`);
          } else if (part.file_url !== undefined) {
            if (!isHttpUrl(part.file_url))
              refuse(`Invalid '${at}.file_url'. Expected a valid URL.`, 400, 'invalid_value');
          } else if (part.file_id === undefined) refuse(`Missing required parameter: '${at}.file_data'.`);
        } else return;
        files.push({ request, path: `input[${i}].content[${j}]`, part });
      });
    });
  };

  const checkItems = (input: Json[], store: boolean) => {
    const calls = new Set<string>();
    input.forEach((item, i) => {
      if (item.type === 'item_reference') {
        if (!store) refuse(notPersistedMessage(item.id), 404);
        if (!issuedItems.has(item.id)) refuse(`Item with id '${item.id}' not found.`, 404);
      } else if (item.type === 'reasoning') {
        const issued = item.id === undefined ? undefined : issuedReasoning.get(item.id);
        if (item.encrypted_content == null) {
          if (!store) refuse(notPersistedMessage(item.id), 404);
          if (issued === undefined) refuse(`Item with id '${item.id}' not found.`, 404);
        } else if (
          item.id === undefined
            ? ![...issuedReasoning.values()].includes(item.encrypted_content)
            : issued !== item.encrypted_content
        ) {
          refuse(
            `The encrypted content for item ${item.id ?? `input[${i}]`} could not be verified.`,
            400,
            'invalid_encrypted_content',
          );
        }
        const next = input[i + 1];
        if (
          next === undefined ||
          (next.role !== undefined && next.role !== 'assistant') ||
          next.type === 'function_call_output'
        )
          refuse(`Item '${item.id}' of type 'reasoning' was provided without its required following item.`);
      } else if (item.type === 'function_call') {
        calls.add(item.call_id);
        const needed = reasoningOfCall.get(item.call_id);
        if (needed === undefined) return;
        for (let k = i - 1; k >= 0 && sameResponse(input[k]); k--) if (input[k].id === needed) return;
        refuse(missingReasoningMessage(item.id ?? `fc_${item.call_id}`, needed));
      } else if (item.type === 'function_call_output' && !calls.has(item.call_id)) {
        refuse(`No tool call found for function call output with call_id ${item.call_id}.`);
      }
    });
  };

  const fetch = recordingFetch(requests, (request, requestIndex) => {
    if (request.method !== 'POST' || request.path !== '/v1/responses')
      refuse(`Invalid URL (${request.method} ${request.path})`, 404, null, null);
    if (!request.headers.authorization?.startsWith('Bearer '))
      refuse("You didn't provide an API key.", 401, null, null);
    const body = request.body;
    if (body.stream === true)
      refuse('this local endpoint answers non-streaming requests only', 400, null, 'stream');
    const input: Json[] =
      typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    if (!Array.isArray(input)) refuse("Missing required parameter: 'input'.");
    const store = body.store !== false;
    checkFiles(input, requestIndex);
    checkItems(input, store);

    const includeEncrypted =
      Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
    let lastReasoning: string | undefined;
    const output = reply(body).map((item) => {
      if (typeof item.id === 'string') issuedItems.add(item.id);
      if (item.type === 'reasoning') {
        lastReasoning = String(item.id);
        issuedReasoning.set(lastReasoning, String(item.encrypted_content));
        if (!includeEncrypted) {
          const { encrypted_content: _, ...rest } = item;
          return rest;
        }
      } else if (item.type === 'function_call' && lastReasoning !== undefined) {
        reasoningOfCall.set(String(item.call_id), lastReasoning);
      }
      return item;
    });
    return jsonResponse(200, {
      id: `resp_${requestIndex + 1}`,
      object: 'response',
      created_at: 1_700_000_000 + requestIndex,
      status: 'completed',
      model: body.model,
      output,
      store,
      incomplete_details: null,
      usage: {
        ...usage,
        total_tokens: usage.input_tokens + usage.output_tokens,
        input_tokens_details: { cached_tokens },
        output_tokens_details: { reasoning_tokens },
      },
    });
  });
  return { fetch, requests, files };
}
