// The consumer app: a durable agent on an SQLite file, written as a user writes it, against the
// packages installed from their tarballs. argv: <db> <ledger> <sessionId> <crash|resume>
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { sqliteStore } from '@agentstore/sqlite';
import { z } from 'zod';

const [dbPath, ledgerPath, sessionId, mode] = process.argv.slice(2);
if (!dbPath || !ledgerPath || !sessionId || (mode !== 'crash' && mode !== 'resume')) {
  throw new Error('usage: agent.ts <db> <ledger> <sessionId> <crash|resume>');
}
const posted = (key: string): boolean =>
  existsSync(ledgerPath) && readFileSync(ledgerPath, 'utf8').split('\n').includes(key);

const agent = defineAgent({
  name: 'consumer',
  instructions: 'Post the alert once.',
  tools: {
    post: tool({
      description: 'A side effect: one line in the ledger per post',
      input: z.object({ text: z.string() }),
      handler: ({ text }, ctx) => {
        appendFileSync(ledgerPath, `${ctx.idempotencyKey}\n`);
        // The OS kills the process between write #1 (the call) and write #2 (its result).
        if (mode === 'crash') process.kill(process.pid, 'SIGKILL');
        return { ok: true, text };
      },
      reconcile: (_input, ctx) =>
        posted(ctx.idempotencyKey) ? { happened: true, output: { ok: true } } : { happened: false },
    }),
  },
});

const store = sqliteStore({ path: dbPath });
const result = await run(agent, {
  store,
  sessionId,
  message: 'Checkout is down',
  messageId: 'first-message',
  llm: scriptedLlm([
    { text: 'Posting.', toolCalls: [{ name: 'post', input: { text: 'down' } }] },
    { text: 'Posted.' },
  ]),
  leaseTtlMs: 1_000,
  leaseWaitMs: 5_000,
});
process.stdout.write(`${JSON.stringify({ status: result.status, response: result.response })}\n`);
await store.close();
