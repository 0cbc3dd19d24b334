import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

// Serves an endpoint's `fetch` on 127.0.0.1, for a test that drives the provider package from
// another process: a worker that crashes and a new one that resumes must both reach the same
// endpoint, which remembers every signature it issued. Pass `${origin}/v1` (Anthropic, OpenAI)
// or `${origin}/v1beta` (Gemini) as the provider's `baseURL`.

export interface ServedEndpoint {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  close(): Promise<void>;
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export async function serveOverHttp(fetch: typeof globalThis.fetch): Promise<ServedEndpoint> {
  const server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === 'string') headers.set(name, value);
      const answer = await fetch(`http://${request.headers.host}${request.url ?? '/'}`, {
        method: request.method,
        headers,
        ...(body.length > 0 && { body }),
      });
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(Buffer.from(await answer.arrayBuffer()));
    } catch (error) {
      // A bug in the endpoint or the test: answer 500 with the cause rather than hang the client.
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error instanceof Error ? error.stack : error));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
