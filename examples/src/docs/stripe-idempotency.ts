// examples/src/docs/stripe-idempotency.ts
import { tool } from '@agentstore/core';
import { z } from 'zod';

/** The slice of a Stripe-like client this example needs. */
export interface Payments {
  charges: {
    create(
      params: { amount: number; currency: string; customer: string },
      options: { idempotencyKey: string },
    ): Promise<{ id: string; status: string }>;
    search(query: { metadataKey: string }): Promise<{ id: string; status: string } | null>;
  };
}

export function chargeTool(payments: Payments) {
  return tool({
    description: 'Charges the customer',
    input: z.object({ customer: z.string(), cents: z.number().int().positive() }),
    // The key is the same on every re-invocation of this tool call, so if a crash orphaned
    // the first attempt, the payment provider returns the first charge instead of a second one.
    handler: async ({ customer, cents }, ctx) => {
      const charge = await payments.charges.create(
        { amount: cents, currency: 'usd', customer },
        { idempotencyKey: ctx.idempotencyKey },
      );
      return { chargeId: charge.id, status: charge.status };
    },
    // After a crash, ask the provider whether the charge happened instead of guessing.
    reconcile: async (_input, ctx) => {
      const found = await payments.charges.search({ metadataKey: ctx.idempotencyKey });
      return found
        ? { happened: true, output: { chargeId: found.id, status: found.status } }
        : { happened: false };
    },
  });
}
