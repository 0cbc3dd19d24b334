import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Why a request was refused, with the HTTP status it gets. */
export interface Refusal {
  status: 401 | 403 | 421;
  reason: string;
}

/** A one-time secret for one studio process: 256 random bits, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant-time equality of two secrets of any length (hashing first equalises the lengths). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** The cookie's name carries the port: cookies are not port-scoped, two studios must not clash. */
export const cookieName = (port: number) => `agentstore_studio_${port}`;

export function readCookie(req: IncomingMessage, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return null;
}

export const CSRF_HEADER = 'x-agentstore-csrf';

export interface Guard {
  /** Every request: the right Host (DNS rebinding), then the token from the cookie or the first URL. */
  authenticate(req: IncomingMessage, url: URL): { ok: true; fromUrl: boolean } | Refusal;
  /** State-changing requests: the cookie (never the URL), this origin, and the CSRF header. */
  checkWrite(req: IncomingMessage): Refusal | null;
  /** The `Set-Cookie` value that carries the token after the first URL. */
  sessionCookie(): string;
  readonly csrfToken: string;
}

const SAFE_FETCH_SITES = new Set(['same-origin', 'none']);

export function createGuard(token: string, port: number): Guard {
  const csrfToken = newToken();
  const name = cookieName(port);
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  return {
    csrfToken,
    authenticate(req, url) {
      // A page on another name resolving to 127.0.0.1 (DNS rebinding) sends its own Host.
      if (!hosts.has(req.headers.host ?? '')) return { status: 421, reason: 'unexpected Host header' };
      // A page of another origin (another port on 127.0.0.1 is same-site, so it gets the cookie).
      const site = req.headers['sec-fetch-site'];
      const fromUrlParam = url.searchParams.get('token');
      const cookie = readCookie(req, name);
      if (typeof site === 'string' && !SAFE_FETCH_SITES.has(site)) {
        return { status: 403, reason: `cross-origin request (Sec-Fetch-Site: ${site})` };
      }
      if (cookie !== null && sameSecret(cookie, token)) return { ok: true, fromUrl: false };
      // The URL's token is traded for the cookie by a page load only, never by a change.
      const safe = req.method === 'GET' || req.method === 'HEAD';
      if (safe && fromUrlParam !== null && sameSecret(fromUrlParam, token))
        return { ok: true, fromUrl: true };
      return {
        status: 401,
        reason: 'missing or wrong token: open the URL agentstore studio printed',
      };
    },
    checkWrite(req) {
      const cookie = readCookie(req, name);
      if (cookie === null || !sameSecret(cookie, token))
        return { status: 401, reason: 'a change needs the session cookie' };
      const origin = req.headers.origin;
      if (origin === undefined || !origins.has(origin))
        return { status: 403, reason: `a change must come from this page (Origin: ${origin ?? 'none'})` };
      const site = req.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin')
        return { status: 403, reason: `a change must be same-origin (Sec-Fetch-Site: ${site})` };
      const csrf = req.headers[CSRF_HEADER];
      if (typeof csrf !== 'string' || !sameSecret(csrf, csrfToken))
        return { status: 403, reason: `a change needs the ${CSRF_HEADER} header` };
      return null;
    },
    sessionCookie: () => `${name}=${token}; HttpOnly; SameSite=Strict; Path=/`,
  };
}
