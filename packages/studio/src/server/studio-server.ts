import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentStore } from '@agentstore/core';
import { createApi, MAX_LIST_LIMIT, MAX_MESSAGE_PAGE } from './api.ts';
import { createGuard, newToken, type Refusal } from './auth.ts';
import type { StudioScope } from './scope.ts';
import { SESSION_STATUSES } from './session-status.ts';
import { readClientFile } from './static-files.ts';

export interface StudioOptions {
  store: AgentStore;
  /** 0 (default): a free port chosen by the system. */
  port?: number;
  tenantId?: string;
  ownerId?: string;
  /** Told of every refused request (no token, another origin, a change without its proofs). */
  onRefusal?: (refusal: { method: string; path: string; status: number; reason: string }) => void;
}

export interface Studio {
  /** The one URL that opens the studio: it carries the one-time token. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const HEADERS = {
  // Everything comes from this origin; images may be inline data from stored file parts.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; frame-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra = {}) {
  res.writeHead(status, { ...HEADERS, 'content-type': type, ...extra });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, body: unknown) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));

/**
 * Serves the studio for `store` on 127.0.0.1. Every request (page, script, API) needs the token:
 * from the first URL once, then from an HttpOnly SameSite=Strict cookie the first answer sets.
 */
export async function startStudio(options: StudioOptions): Promise<Studio> {
  const scope: StudioScope = {
    ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
    ...(options.ownerId !== undefined ? { ownerId: options.ownerId } : {}),
  };
  const api = createApi(options.store, scope);
  const token = newToken();
  let guard: ReturnType<typeof createGuard> | undefined;

  function refuse(req: IncomingMessage, res: ServerResponse, url: URL, refusal: Refusal) {
    options.onRefusal?.({ method: req.method ?? '', path: url.pathname, ...refusal });
    sendJson(res, refusal.status, { error: refusal.reason });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const auth = guard!.authenticate(req, url);
    if (!('ok' in auth)) return refuse(req, res, url, auth);
    if (auth.fromUrl) {
      // Trade the URL's token for the cookie and drop it from the address bar and history.
      return send(res, 303, 'text/plain; charset=utf-8', 'see /', {
        location: url.pathname,
        'set-cookie': guard!.sessionCookie(),
      });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // No change is offered yet; every future one passes this check first.
      const refusal = guard!.checkWrite(req);
      if (refusal) return refuse(req, res, url, refusal);
      return sendJson(res, 405, { error: `${req.method} ${url.pathname} is not supported` });
    }
    if (url.pathname === '/api/info') {
      return sendJson(res, 200, {
        scope,
        csrfToken: guard!.csrfToken,
        durable: options.store.durable,
        statuses: SESSION_STATUSES,
        maxListLimit: MAX_LIST_LIMIT,
        maxMessagePage: MAX_MESSAGE_PAGE,
      });
    }
    if (url.pathname.startsWith('/api/')) {
      const answer = await api.handle(url.pathname, url.searchParams);
      return sendJson(res, answer.status, answer.body);
    }
    const file = await readClientFile(url.pathname);
    if (!file) return sendJson(res, 404, { error: `no such file ${url.pathname}` });
    return send(res, 200, file.type, file.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // The operator sees what went wrong; the page gets the message, not the stack.
      process.stderr.write(
        `agentstore studio: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      if (!res.headersSent)
        sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  guard = createGuard(token, port);
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
