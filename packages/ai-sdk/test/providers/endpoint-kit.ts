import { isDeepStrictEqual } from 'node:util';

// What the three local provider endpoints share: they are `fetch` functions (a provider package
// takes one: `createAnthropic({ fetch })`), so no port is opened and nothing leaves the process;
// every request is recorded as sent, and errors answer in the provider's own error format.

export interface RecordedRequest {
  method: string;
  url: string;
  /** The URL's path, e.g. `/v1/messages`. */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The body exactly as sent, before parsing (signatures can be checked byte for byte). */
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the raw JSON body, asserted on by shape
  body: any;
}

/** A file content block/part found in a user message, as the provider received it. */
export interface RecordedFile {
  /** Index of the request in `requests`. */
  request: number;
  /** Where it sat in the request body, e.g. `messages[0].content[1]`. */
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: the raw block/part, asserted on by shape
  part: any;
}

export interface ProviderEndpoint {
  /** Pass as the provider's `fetch` option. */
  readonly fetch: typeof globalThis.fetch;
  readonly requests: RecordedRequest[];
  readonly files: RecordedFile[];
}

/** Thrown inside a handler to answer with an error status and the provider's error body. */
export class EndpointRefusal extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** A response's JSON body, for asserting on by shape. */
// biome-ignore lint/suspicious/noExplicitAny: asserted on by shape
export const readJson = async (response: Response): Promise<any> => response.json();

export const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/**
 * Wraps a handler into a `fetch`: records the request (even one that is refused), parses the
 * JSON body, and turns an `EndpointRefusal` into its HTTP answer. Anything else a handler throws
 * is a bug in the test and surfaces as such.
 */
export function recordingFetch(
  requests: RecordedRequest[],
  handle: (request: RecordedRequest, index: number) => Response,
): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const text = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
    const url = new URL(request.url);
    const recorded: RecordedRequest = {
      method: request.method,
      url: request.url,
      path: url.pathname,
      headers: Object.fromEntries([...request.headers].map(([name, value]) => [name.toLowerCase(), value])),
      text,
      body: text ? JSON.parse(text) : null,
    };
    requests.push(recorded);
    try {
      return handle(recorded, requests.length - 1);
    } catch (error) {
      if (error instanceof EndpointRefusal) return jsonResponse(error.status, error.body);
      throw error;
    }
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64 (what the three APIs accept for inline bytes). */
export const isBase64 = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && BASE64.test(value);

export const isHttpUrl = (value: unknown): boolean => {
  if (typeof value !== 'string') return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
};

/** Structural equality, key order ignored (JSON objects are unordered). */
export const sameJson = (a: unknown, b: unknown): boolean => isDeepStrictEqual(a, b);
