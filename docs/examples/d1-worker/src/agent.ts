import { defineAgent, tool } from '@agentstore/core';
import { z } from 'zod';

/**
 * A support agent with one read and one side effect. The "payments API" is a D1 table keyed by
 * the idempotency key, standing in for Stripe & co., which dedupe on that key the same way.
 */
export function supportAgent(db: D1Database) {
  return defineAgent({
    name: 'support',
    instructions: 'You help customers with orders. Look the order up before refunding it.',
    tools: {
      lookupOrder: tool({
        description: 'Reads an order by id',
        input: z.object({ orderId: z.string() }),
        safeToRetry: true, // a read: re-running it after a crash is harmless
        handler: async ({ orderId }) => ({ orderId, totalCents: 1999, status: 'delivered' }),
      }),
      issueRefund: tool({
        description: 'Refunds an order (moves money: never twice)',
        input: z.object({ orderId: z.string(), cents: z.number().int().positive() }),
        handler: async ({ orderId, cents }, ctx) => {
          await db
            .prepare(
              'INSERT INTO refunds (idempotency_key, order_id, cents) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
            )
            .bind(ctx.idempotencyKey, orderId, cents)
            .run();
          return { refunded: cents };
        },
        // After a crash between the refund and its commit: ask the payments API, never guess.
        reconcile: async (_input, ctx) => {
          const row = await db
            .prepare('SELECT cents FROM refunds WHERE idempotency_key = ?')
            .bind(ctx.idempotencyKey)
            .first<{ cents: number }>();
          return row ? { happened: true, output: { refunded: row.cents } } : { happened: false };
        },
      }),
    },
  });
}

export const REFUNDS_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS refunds (idempotency_key TEXT PRIMARY KEY, order_id TEXT NOT NULL, cents INTEGER NOT NULL)';
