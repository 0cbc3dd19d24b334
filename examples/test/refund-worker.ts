// A process that starts a refund (which needs approval) or approves it: argv <db> <start|approve>.
// Refunds are counted in a table of the same SQLite file, standing in for the payment provider.
import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { sqliteStore } from '@agentstore/sqlite';
import Database from 'better-sqlite3';
import { z } from 'zod';

const [db, mode] = process.argv.slice(2) as [string, 'start' | 'approve'];
const payments = new Database(db);
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
const store = sqliteStore({ path: db });
try {
  const result = await run(agent, {
    store,
    sessionId: 'refund-session',
    message: mode === 'start' ? 'Refund order 17' : undefined,
    approvals: mode === 'approve' ? { 'refund-1': { approve: true } } : undefined,
    llm: scriptedLlm([
      { toolCalls: [{ id: 'refund-1', name: 'refund', input: { cents: 9000 } }] },
      { text: 'Refunded 90.00.' },
    ]),
  });
  const refunds = (payments.prepare('SELECT count(*) AS n FROM refunds').get() as { n: number }).n;
  process.stdout.write(JSON.stringify({ status: result.status, pending: result.pendingApprovals, refunds }));
} finally {
  await store.close();
  payments.close();
}
