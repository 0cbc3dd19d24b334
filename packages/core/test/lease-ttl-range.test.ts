import { describe, expect, it } from 'vitest';
import { type AgentStore, defineAgent, isAgentStoreError, MAX_LEASE_TTL_MS, run } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * Attack on "run() checks its TTLs before the lease": leaseTtlMs is only checked to be a positive
 * integer. Above 3 × (2^31 − 1) ms (~74.5 days) the lease keeper's `setInterval(tick, ttl / 3)`
 * overflows and Node runs it every 1 ms — a renewal storm against the store for the whole run;
 * above ~8.6e15 − now, `new Date(now + ttl)` is invalid and acquireLease throws a raw RangeError.
 * Both must be a typed refusal before any store call or model call.
 */

const agent = defineAgent({ name: 'attack', instructions: 'x', tools: {} });

describe('leaseTtlMs beyond what a timer or a Date can hold', () => {
  // 2^31 ms is the first delay a timer cannot hold: the lease keeper does not clamp its timers,
  // so no TTL it could be given may reach it.
  for (const ttl of [MAX_LEASE_TTL_MS + 1, 2 ** 31, 3 * 2_147_483_647 + 3, Number.MAX_SAFE_INTEGER]) {
    it(`leaseTtlMs ${ttl}: INVALID_ARGUMENT before any store or model call`, async () => {
      const inner = durableMemoryStore();
      let storeCalls = 0;
      const store: AgentStore = {
        ...inner,
        acquireLease: (...args) => {
          storeCalls++;
          return inner.acquireLease(...args);
        },
      };
      const llm = scriptedLlm([{ text: 'done' }]);
      const outcome = await run(agent, { store, sessionId: 's', message: 'hi', llm, leaseTtlMs: ttl }).catch(
        (e: unknown) => e,
      );
      expect(isAgentStoreError(outcome, 'INVALID_ARGUMENT'), `outcome: ${String(outcome)}`).toBe(true);
      expect(storeCalls, 'acquireLease calls').toBe(0);
      expect(llm.requests, 'model calls').toHaveLength(0);
    });
  }
});
