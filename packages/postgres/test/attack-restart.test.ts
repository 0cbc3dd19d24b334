import { defineAgent, isAgentStoreError, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.ts';
import { freshSchema, init, uniqueId } from './harness.ts';

const anyInput = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

/*
 * Attack (issue 14): Postgres crashes and restarts (`pg_ctl restart -m immediate`) while a run
 * holds the session's lease and its handler is in flight. The lease is a row: it must survive,
 * no other worker may get in, and the effect must fire once.
 */
describe('attack: Postgres restarts while a run holds the lease', () => {
  it('the lease survives, another worker is refused, one effect', async () => {
    const saved = process.env.AGENTSTORE_PG_URL;
    delete process.env.AGENTSTORE_PG_URL;
    const server = await launchPostgres();
    if (saved !== undefined) process.env.AGENTSTORE_PG_URL = saved;
    const pool = new pg.Pool({ connectionString: server.info.url, max: 4 });
    pool.on('error', () => {});
    try {
      const store = postgresStore({ pool }, { schema: freshSchema('restart') });
      await store.migrate();
      const id = uniqueId('held');
      const effects = new Map<string, number>();
      let inHandler!: () => void;
      const reached = new Promise<void>((resolve) => {
        inHandler = resolve;
      });
      let resume!: () => void;
      const resumed = new Promise<void>((resolve) => {
        resume = resolve;
      });
      const charge = tool({
        description: 'charges',
        input: anyInput,
        handler: async (_input, ctx) => {
          inHandler();
          await resumed;
          ctx.signal.throwIfAborted();
          effects.set(ctx.idempotencyKey, (effects.get(ctx.idempotencyKey) ?? 0) + 1);
          return 'charged';
        },
        reconcile: (_input, ctx) =>
          effects.has(ctx.idempotencyKey) ? { happened: true, output: 'charged' } : { happened: false },
      });
      const agent = defineAgent({ name: 'agent', instructions: '', tools: { charge } });
      const holder = run(agent, {
        store,
        sessionId: id,
        message: 'pay',
        llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
        leaseTtlMs: 60_000,
      }).catch((error: unknown) => error);
      await reached;
      await server.restart();
      // Pooled connections died with the server: try until the store gives a typed answer.
      let other: unknown;
      for (let i = 0; i < 10; i++) {
        other = await store
          .acquireLease(id, { holder: 'other', ttlMs: 1_000, init: init() })
          .catch((e: unknown) => e);
        if (isAgentStoreError(other)) break;
      }
      expect(isAgentStoreError(other, 'SESSION_BUSY')).toBe(true);
      resume();
      const outcome = await holder;
      console.info(
        '[attack] holder outcome after the restart:',
        outcome instanceof Error
          ? `${outcome.name}: ${outcome.message}`
          : (outcome as { status: string }).status,
      );
      expect([...effects.values()]).toEqual([1]);
      // A later run finds the call settled and fires nothing.
      const later = await run(agent, {
        store,
        sessionId: id,
        llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
        leaseWaitMs: 120_000,
      });
      expect(later.status).toBe('complete');
      expect([...effects.values()]).toEqual([1]);
    } finally {
      await pool.end();
      await server.stop();
    }
  });
});
