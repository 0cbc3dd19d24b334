import { SeqConflictError } from '@agentstore/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const server = usePostgres('conc');

async function storedIds(sessionId: string): Promise<{ seq: number; id: string }[]> {
  const { rows } = await server.pool.query<{ seq: string; body: string }>(
    `SELECT seq, body FROM "${server.schema}".agentstore_messages WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return rows.map((row) => ({ seq: Number(row.seq), id: JSON.parse(row.body).id as string }));
}

describe('concurrency', () => {
  it('50 leased sessions × 20 steps in parallel: nothing lost, nothing duplicated', async () => {
    const store = await server.store();
    const sessions = Array.from({ length: 50 }, (_, i) => uniqueId(`par${i}`));
    await Promise.all(
      sessions.map(async (id) => {
        const { epoch } = await store.acquireLease(id, {
          holder: `worker-${id}`,
          ttlMs: 60_000,
          init: init(),
        });
        const lease = { holder: `worker-${id}`, epoch };
        let head = 0;
        for (let step = 0; step < 20; step++) {
          const result = await store.append(id, {
            expectedSeq: head,
            messages: [
              message(`${step}-call`, 'call', { role: 'assistant' }),
              message(`${step}-result`, 'result', { role: 'tool' }),
            ],
            session: { state: { step } },
            lease,
            releaseLease: step === 19,
          });
          head = result.headSeq;
        }
      }),
    );
    for (const id of sessions) {
      const expected = Array.from({ length: 20 }, (_, step) => [`${step}-call`, `${step}-result`]).flat();
      expect(await storedIds(id)).toEqual(expected.map((mid, i) => ({ seq: i + 1, id: mid })));
      const loaded = await store.load(id);
      expect(loaded?.session).toMatchObject({ headSeq: 40, state: { step: 19 }, lease: null });
    }
  });

  /*
   * The append has a statement per shape (one message bound as text, several as a JSON array),
   * and a prepared statement may run on a custom or a generic plan. Racers with the same
   * expectedSeq and different sizes: exactly one wins every round, whatever the plan, and every
   * other one is refused as a seq conflict at the winner's head, with nothing of its own stored.
   */
  it.each(['force_custom_plan', 'force_generic_plan'])(
    'same-seq racers of 1, 2, 3 and 64 messages under %s: one winner per round, the rest refused, exactly the winners stored',
    async (planMode) => {
      // Set by the server at connect, on every connection of the pool (a failed setting fails the connect).
      const pool = new pg.Pool({
        connectionString: server.url,
        max: 6,
        options: `-c plan_cache_mode=${planMode}`,
      });
      try {
        const shown = await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
        expect(shown.rows[0]!.plan_cache_mode).toBe(planMode);
        const store = postgresStore({ pool }, { schema: server.schema });
        const id = uniqueId('shapes-race');
        const sizes = [1, 3, 64, 1, 2, 3];
        const winners: string[] = [];
        let head = 0;
        for (let round = 0; round < 20; round++) {
          const batches = sizes.map((size, w) =>
            Array.from({ length: size }, (_, i) => message(`r${round}-w${w}-${i}`)),
          );
          const outcomes = await Promise.allSettled(
            batches.map((messages) =>
              store.append(id, { expectedSeq: head, messages, session: { init: init() }, lease: null }),
            ),
          );
          const won = outcomes.flatMap((outcome, w) => (outcome.status === 'fulfilled' ? [w] : []));
          expect(won).toHaveLength(1);
          const winner = batches[won[0]!]!;
          expect(outcomes[won[0]!]).toEqual({
            status: 'fulfilled',
            value: { headSeq: head + winner.length },
          });
          head += winner.length;
          for (const outcome of outcomes) {
            if (outcome.status === 'rejected')
              expect(outcome.reason).toMatchObject({ code: 'SEQ_CONFLICT', actualSeq: head });
          }
          winners.push(...winner.map((m) => m.id));
        }
        const rows = await storedIds(id);
        expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
        expect(rows.map((r) => r.id)).toEqual(winners);
      } finally {
        await pool.end();
      }
    },
  );

  it('writers racing on the same sessions: exactly one wins each seq, the losers get SeqConflictError', async () => {
    const store = await server.store();
    const sessions = Array.from({ length: 10 }, (_, i) => uniqueId(`race${i}`));
    let conflicts = 0;
    const writer = async (id: string, name: string) => {
      for (let n = 0; n < 10; n++) {
        const mine = message(`${name}-${n}`);
        for (;;) {
          const head = (await store.load(id))?.session.headSeq ?? 0;
          try {
            await store.append(id, {
              expectedSeq: head,
              messages: [mine],
              session: { init: init() },
              lease: null,
            });
            break;
          } catch (error) {
            if (!(error instanceof SeqConflictError)) throw error;
            conflicts += 1;
          }
        }
      }
    };
    await Promise.all(sessions.flatMap((id) => ['w1', 'w2', 'w3', 'w4'].map((name) => writer(id, name))));
    expect(conflicts).toBeGreaterThan(0);
    for (const id of sessions) {
      const rows = await storedIds(id);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(new Set(rows.map((r) => r.id)).size).toBe(40);
      expect((await store.load(id))?.session.headSeq).toBe(40);
    }
  });
});
