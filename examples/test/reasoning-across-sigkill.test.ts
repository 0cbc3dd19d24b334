import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenTestTarget } from '@agentstore/core/testing';
import openD1Target from '@agentstore/d1/testing';
import openDynamoTarget from '@agentstore/dynamodb/testing';
import openPostgresTarget from '@agentstore/postgres/testing';
import openRedisTarget from '@agentstore/redis/testing';
import openSqliteTarget from '@agentstore/sqlite/testing';
import { afterAll, describe, expect, it } from 'vitest';
import * as anthropic from '../../packages/ai-sdk/test/providers/anthropic-messages-api.ts';
import type { ProviderEndpoint } from '../../packages/ai-sdk/test/providers/endpoint-kit.ts';
import * as google from '../../packages/ai-sdk/test/providers/gemini-generate-content-api.ts';
import * as openai from '../../packages/ai-sdk/test/providers/openai-responses-api.ts';
import { serveOverHttp } from '../../packages/ai-sdk/test/providers/serve-over-http.ts';

// A reasoning model's turn, committed in write #1, survives a real SIGKILL inside the tool handler:
// a new process resumes, reconciles the call (the effect happened once), and its follow-up request
// carries the signed thinking, the thought signature or the encrypted reasoning — which each local
// endpoint refuses to do without, as the real APIs do — and the user's files, on every store.

const here = dirname(fileURLToPath(import.meta.url));
const SIGNATURE = `EqQBCkYIBxgCKkD${'s1G'.repeat(3_400)}/+=`; // ~10 KB
const ENCRYPTED = `gAAAAAB${'e9X'.repeat(1_360)}`; // ~4 KB
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF =
  'JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDw+PgolJUVPRgo=';
const message = [
  { type: 'text', text: 'Where is order 7? The invoice and a photo are attached.' },
  { type: 'file', mediaType: 'image/png', data: PNG },
  { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'invoice.pdf' },
];

// biome-ignore lint/suspicious/noExplicitAny: raw request bodies
type Body = any;
const endpoints: Record<string, () => { api: ProviderEndpoint; secret: string }> = {
  anthropic: () => ({
    secret: SIGNATURE,
    api: anthropic.startAnthropicMessagesApi((body: Body) =>
      JSON.stringify(body.messages).includes('"tool_result"')
        ? [anthropic.text('Order 7 shipped.')]
        : [
            anthropic.thinking('Look order 7 up.', SIGNATURE),
            anthropic.toolUse('toolu_7', 'lookup', { id: 7 }),
          ],
    ),
  }),
  google: () => ({
    secret: SIGNATURE,
    api: google.startGeminiApi((body: Body) =>
      JSON.stringify(body.contents).includes('functionResponse')
        ? [google.text('Order 7 shipped.')]
        : [google.thought('Look order 7 up.'), google.functionCall('lookup', { id: 7 }, SIGNATURE)],
    ),
  }),
  openai: () => ({
    secret: ENCRYPTED,
    api: openai.startOpenAIResponsesApi((body: Body) =>
      JSON.stringify(body.input).includes('function_call_output')
        ? [openai.message('Order 7 shipped.')]
        : [openai.reasoning('rs_7', ENCRYPTED), openai.functionCall('call_7', 'lookup', { id: 7 })],
    ),
  }),
};

/** A worker process, run asynchronously: the endpoints it calls are served by this process. */
const node = (args: string[]) =>
  new Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@agentstore/source', ...args], {
      cwd: join(here, '..'),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ stdout, stderr, signal }));
  });

const opened: OpenTestTarget[] = [];
afterAll(async () => {
  for (const target of opened) await target.close();
});

describe.each([
  ['sqlite', openSqliteTarget],
  ['postgres', openPostgresTarget],
  ['redis', openRedisTarget],
  ['dynamodb', openDynamoTarget],
  ['d1', openD1Target],
] as const)('reasoning and files across a SIGKILL on %s', (_store, open) => {
  it('each provider: the resumed follow-up carries the reasoning and the files, and the tool fired once', async () => {
    const target = await open();
    opened.push(target);
    const providers = Object.keys(endpoints);
    const started = providers.map((provider) => ({ provider, ...endpoints[provider]!() }));
    const served = await Promise.all(started.map(({ api }) => serveOverHttp(api.fetch)));
    try {
      const handle = JSON.stringify({ module: target.module, options: target.reopen });
      const origins = JSON.stringify(Object.fromEntries(providers.map((p, i) => [p, served[i]!.origin])));
      const effects = join(mkdtempSync(join(tmpdir(), 'agentstore-effects-')), 'effects.log');
      const worker = (...args: string[]) =>
        node([join(here, 'reasoning-worker.ts'), handle, origins, effects, ...args]);

      for (const { provider, api } of started) {
        const crashed = await worker('crash', provider, JSON.stringify(message));
        expect(crashed.signal, `${provider}: ${crashed.stderr}`).toBe('SIGKILL');
        expect(api.requests).toHaveLength(1);
      }
      // One new process resumes the three sessions (each waits out its killed holder's lease).
      const resumed = await worker('resume');
      expect(resumed.stderr).toBe('');
      const done = { status: 'complete', response: 'Order 7 shipped.' };
      expect(JSON.parse(resumed.stdout)).toEqual({ outcome: [done, done, done], effects: 3 });
      for (const { provider, api, secret } of started) {
        // The follow-up went out once, from the new process, and was accepted with the reasoning in it.
        expect(api.requests, provider).toHaveLength(2);
        expect(api.requests[1]!.text, provider).toContain(secret);
        // The user's files reached the provider in the follow-up exactly as in the first request.
        const filesOf = (request: number) =>
          api.files.filter((f) => f.request === request).map((f) => f.part);
        expect(filesOf(0), provider).toHaveLength(2);
        expect(filesOf(1), provider).toEqual(filesOf(0));
      }
    } finally {
      await Promise.all(served.map((s) => s.close()));
    }
  }, 300_000);
});
