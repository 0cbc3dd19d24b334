// No way in without the token; no request from another origin; changes need cookie + origin + CSRF header.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, openBrowser } from './helpers/browser.ts';
import { seededStudio } from './helpers/studio.ts';

let studio: Awaited<ReturnType<typeof seededStudio>>;

beforeAll(async () => {
  studio = await seededStudio();
});
afterAll(() => studio?.close());

/** A raw request, so Host, Origin and Sec-Fetch-Site are exactly what a test says. */
function raw(path: string, options: { method?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: studio.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const cookie = () => `agentstore_studio_${studio.port}=${studio.token}`;

describe('the token', () => {
  it('guards every page, script and API request', async () => {
    for (const path of [
      '/',
      '/main.js',
      '/styles.css',
      '/api/info',
      '/api/sessions',
      '/api/sessions/refund-ok',
    ]) {
      expect((await raw(path)).status, path).toBe(401);
      expect((await raw(`${path}${path.includes('?') ? '&' : '?'}token=wrong`)).status, path).toBe(401);
      expect(
        (await raw(path, { headers: { cookie: `agentstore_studio_${studio.port}=wrong` } })).status,
      ).toBe(401);
      expect((await raw(path, { headers: { cookie: cookie() } })).status, path).toBe(200);
    }
  });

  it('is traded once for an HttpOnly SameSite=Strict cookie and removed from the URL', async () => {
    const answer = await raw(`/?token=${studio.token}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe('/');
    expect(answer.headers['set-cookie']).toEqual([`${cookie()}; HttpOnly; SameSite=Strict; Path=/`]);
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('refuses another Host name (DNS rebinding) even with the cookie', async () => {
    const answer = await raw('/api/sessions', {
      headers: { cookie: cookie(), host: `evil.example:${studio.port}` },
    });
    expect(answer.status).toBe(421);
  });
});

describe('requests from another origin', () => {
  it('are refused even with the cookie (another port on 127.0.0.1 is the same site)', async () => {
    const headers = { cookie: cookie(), 'sec-fetch-site': 'same-site' };
    expect((await raw('/api/sessions', { headers })).status).toBe(403);
    expect(
      (await raw('/api/sessions', { headers: { ...headers, 'sec-fetch-site': 'cross-site' } })).status,
    ).toBe(403);
  });

  it('changes need the cookie, this origin and the CSRF header', async () => {
    const info = JSON.parse((await raw('/api/info', { headers: { cookie: cookie() } })).body) as {
      csrfToken: string;
    };
    const origin = `http://127.0.0.1:${studio.port}`;
    const good = {
      cookie: cookie(),
      origin,
      'sec-fetch-site': 'same-origin',
      'x-agentstore-csrf': info.csrfToken,
    };
    const post = (headers: Record<string, string>) => raw('/api/sessions', { method: 'POST', headers });
    // Past the guard, no change exists yet: 405.
    expect((await post(good)).status).toBe(405);
    const { cookie: _c, ...noCookie } = good;
    expect((await post(noCookie)).status).toBe(401);
    expect(
      (await raw(`/api/sessions?token=${studio.token}`, { method: 'POST', headers: noCookie })).status,
    ).toBe(401);
    const { 'x-agentstore-csrf': _x, ...noCsrf } = good;
    expect((await post(noCsrf)).status).toBe(403);
    expect((await post({ ...good, 'x-agentstore-csrf': 'wrong' })).status).toBe(403);
    expect((await post({ ...good, origin: 'http://127.0.0.1:1' })).status).toBe(403);
    const { origin: _o, ...noOrigin } = good;
    expect((await post(noOrigin)).status).toBe(403);
  });

  describe('in a browser that holds the cookie', () => {
    let browser: Browser;
    let evil: Server;
    let guarded: Awaited<ReturnType<typeof seededStudio>>;
    const refusals: { method: string; path: string; status: number; reason: string }[] = [];
    let twoRefusals: () => void;
    const refused = new Promise<void>((resolve) => {
      twoRefusals = resolve;
    });
    beforeAll(async () => {
      guarded = await seededStudio({
        onRefusal: (refusal) => {
          refusals.push(refusal);
          if (refusals.length === 2) twoRefusals();
        },
      });
      browser = await openBrowser();
      // Another origin on the same machine: its page tries to read the API and to post a form.
      evil = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><title>other</title>
<form method="post" action="${guarded.origin}/api/sessions"><input name="x" value="1"></form>
<script>fetch(${JSON.stringify(`${guarded.origin}/api/sessions`)}, { credentials: 'include', mode: 'no-cors' })
  .finally(() => document.forms[0].submit());</script>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      await browser?.close();
      await guarded?.close();
      await new Promise((resolve) => evil?.close(resolve));
    });

    it('refuses its read and its form post', async () => {
      const { page } = browser;
      await page.goto(guarded.url);
      await page.getByRole('heading', { name: 'Sessions' }).waitFor();
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      // Another port on 127.0.0.1 is the same site, so SameSite=Strict alone would let the cookie
      // through: the studio's own Sec-Fetch-Site / Origin checks refuse both.
      await refused;
      expect(refusals).toEqual([
        {
          method: 'GET',
          path: '/api/sessions',
          status: 403,
          reason: 'cross-origin request (Sec-Fetch-Site: same-site)',
        },
        {
          method: 'POST',
          path: '/api/sessions',
          status: 403,
          reason: 'cross-origin request (Sec-Fetch-Site: same-site)',
        },
      ]);
    });
  });
});
