import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for OpenAI's Responses API (`POST /v1/responses`, non-streaming), the API
// `@ai-sdk/openai` uses by default. It speaks just enough of the wire format: function_call
// items, assistant message items with output_text, and usage.

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the raw JSON body, asserted on by shape
  body: any;
}

export type ResponsesItem = Record<string, unknown>;

export interface FakeResponsesApi {
  /** Base URL to give `createOpenAI({ baseURL })`, e.g. http://127.0.0.1:PORT/v1 */
  baseURL: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export const functionCall = (callId: string, name: string, args: unknown): ResponsesItem => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
});

export const assistantText = (text: string): ResponsesItem => ({
  type: 'message',
  id: 'msg_1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * Starts the server on 127.0.0.1 with a free port. `reply` picks the output items for each
 * request from its body, so a resumed run gets the answer its conversation calls for.
 */
export async function startFakeResponsesApi(
  // biome-ignore lint/suspicious/noExplicitAny: the raw JSON request body
  reply: (body: any) => ResponsesItem[],
  usage = { input_tokens: 40, output_tokens: 8 },
): Promise<FakeResponsesApi> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (request, response) => {
    const path = request.url ?? '';
    const text = await readBody(request);
    const body = text ? JSON.parse(text) : null;
    requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization, body });
    if (request.method !== 'POST' || path !== '/v1/responses') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: `no route ${path}`, type: 'not_found', code: '404' } }),
      );
      return;
    }
    const output = reply(body);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: `resp_${requests.length}`,
        object: 'response',
        created_at: 1_700_000_000 + requests.length,
        status: 'completed',
        model: body.model,
        output,
        incomplete_details: null,
        usage: {
          ...usage,
          total_tokens: usage.input_tokens + usage.output_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
