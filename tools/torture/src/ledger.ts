import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One handler invocation as the outside world saw it. */
export interface LedgerCall {
  /** Arrival order over the whole ledger. */
  order: number;
  sessionId: string;
  tool: string;
  toolCallId: string;
  idempotencyKey: string;
  pid: number;
  attempt: number;
  /** The lease epoch of the worker that ran the handler. */
  epoch: number;
  /** Whether the caller asked the ledger to dedupe by idempotency key (an idempotent API). */
  dedupe: boolean;
  /** True when a dedupe call found the key's effect already recorded (no new effect). */
  replayed: boolean;
  /** The effect this call produced or replayed. */
  effectId: string;
}

/** What a worker sends with every handler call. */
export interface LedgerCallInput {
  sessionId: string;
  tool: string;
  toolCallId: string;
  idempotencyKey: string;
  pid: number;
  attempt: number;
  epoch: number;
}

/** Decides, per call, whether the response waits: the fencing scenario stops a worker there. */
export type LedgerHook = (call: LedgerCall) => Promise<void> | void;

export interface Ledger {
  url: string;
  calls(sessionId: string): LedgerCall[];
  /** `reconcile` lookups per session (how often a resumed run asked instead of re-running). */
  lookups(sessionId: string): number;
  /** Runs before the response of every call; the response waits for it. */
  setHook(hook: LedgerHook | null): void;
  close(): Promise<void>;
}

/**
 * The external side-effect ledger: a local HTTP service that tool handlers call with `fetch`.
 * It records every raw call, and for callers that opt in (header `x-dedupe: 1`) it behaves like
 * a Stripe-style API: one effect per idempotency key, replayed on a repeat.
 */
export async function startLedger(options: { responseDelayMs?: () => number } = {}): Promise<Ledger> {
  const calls: LedgerCall[] = [];
  const effects = new Map<string, string>();
  const lookups = new Map<string, number>();
  let hook: LedgerHook | null = null;
  let order = 0;

  const body = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const reply = (response: ServerResponse, status: number, value: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(value));
  };

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://ledger');
      if (request.method === 'POST' && url.pathname === '/call') {
        const input = JSON.parse(await body(request)) as LedgerCallInput;
        const dedupe = request.headers['x-dedupe'] === '1';
        const existing = dedupe ? effects.get(input.idempotencyKey) : undefined;
        const effectId = existing ?? `fx-${order + 1}`;
        if (dedupe && existing === undefined) effects.set(input.idempotencyKey, effectId);
        const call: LedgerCall = {
          ...input,
          order: ++order,
          dedupe,
          replayed: existing !== undefined,
          effectId,
        };
        calls.push(call);
        if (hook) await hook(call);
        const delay = options.responseDelayMs?.() ?? 0;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        reply(response, 200, { effectId });
        return;
      }
      if (request.method === 'GET' && url.pathname === '/effect') {
        const sessionId = url.searchParams.get('sessionId') ?? '';
        lookups.set(sessionId, (lookups.get(sessionId) ?? 0) + 1);
        const effectId = effects.get(url.searchParams.get('key') ?? '');
        reply(response, 200, { effectId: effectId ?? null });
        return;
      }
      reply(response, 404, { error: 'not found' });
    })().catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: (sessionId) => calls.filter((call) => call.sessionId === sessionId),
    lookups: (sessionId) => lookups.get(sessionId) ?? 0,
    setHook(next) {
      hook = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
