// One process of the approval scenario: argv <target { module, options } JSON> <payments db> <start|approve|reject|replay>.
// Refunds are rows in a separate SQLite file, standing in for the payment provider.

import { openToolTarget } from '@agentstore/conformance';
import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm, unreachableLlm } from '@agentstore/core/testing';
import Database from 'better-sqlite3';
import { z } from 'zod';

const [handle, paymentsPath, mode] = process.argv.slice(2) as [
  string,
  string,
  'start' | 'approve' | 'reject' | 'replay',
];
const payments = new Database(paymentsPath);
payments.exec('CREATE TABLE IF NOT EXISTS refunds (key TEXT PRIMARY KEY, cents INTEGER)');
const agent = defineAgent({
  name: 'refunds',
  instructions: 'Refund on request.',
  tools: {
    refund: tool({
      description: 'Refunds a payment',
      input: z.object({ cents: z.number() }),
      needsApproval: ({ cents }) => cents > 1000,
      handler: ({ cents }, ctx) => {
        payments.prepare('INSERT INTO refunds (key, cents) VALUES (?, ?)').run(ctx.idempotencyKey, cents);
        return { refunded: cents };
      },
    }),
  },
});
const decisions = {
  approve: { 'refund-1': { approve: true as const } },
  reject: { 'refund-1': { approve: false as const, reason: 'over the refund policy' } },
};
const { module, options } = JSON.parse(handle) as { module: string; options?: Record<string, string> };
const target = await openToolTarget(module, options);
const store = await target.createStore();
try {
  const result = await run(agent, {
    store,
    sessionId: 'refund-session',
    message: mode === 'start' ? 'Refund order 17' : undefined,
    approvals: mode === 'approve' || mode === 'reject' ? decisions[mode] : undefined,
    llm:
      mode === 'replay'
        ? unreachableLlm()
        : scriptedLlm([
            { toolCalls: [{ id: 'refund-1', name: 'refund', input: { cents: 9000 } }] },
            (messages) => ({ text: `Outcome: ${messages.at(-1)?.content}` }),
          ]),
  });
  const refunds = (payments.prepare('SELECT count(*) AS n FROM refunds').get() as { n: number }).n;
  process.stdout.write(
    JSON.stringify({
      status: result.status,
      pending: result.pendingApprovals,
      refunds,
      response: result.response,
    }),
  );
} finally {
  await store.close();
  await target.close();
  payments.close();
}
