/**
 * Append and 10-step loop latency of postgresStore vs the hand-written floor (one prepared
 * guarded CTE), same server, same run, interleaved. Run from packages/postgres:
 *   pnpm run bench            (AGENTSTORE_PG_URL, or a throwaway server from the launcher)
 */
import { cpus, totalmem } from 'node:os';
import { defineAgent, type MessageRecord, type NewMessage, run, tool } from '@agentstore/core';
import { durableMemoryStore, type ScriptStep, scriptedLlm } from '@agentstore/core/testing';
import { launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { postgresStore } from '../src/index.ts';
import { postgresCapabilities } from '../src/testing/capabilities.ts';

const APPEND_SAMPLES = Number(process.env.BENCH_APPEND_SAMPLES ?? 2000);
const LOOP_SAMPLES = Number(process.env.BENCH_LOOP_SAMPLES ?? 100);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
const fmt = (ms: number) => (ms < 1 ? us(ms) : `${ms.toFixed(2)} ms`);

async function time(op: () => Promise<unknown>) {
  const start = performance.now();
  await op();
  return performance.now() - start;
}

/** Alternates the sides (and who goes first), drops the warm-up, reports p50/p99 of each. */
async function compare(warmup: number, samples: number, sides: Record<string, () => Promise<unknown>>) {
  const names = Object.keys(sides);
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]]));
  for (let i = 0; i < warmup + samples; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const t = await time(sides[name]!);
      if (i >= warmup) times[name]!.push(t);
    }
  }
  return Object.fromEntries(
    names.map((n) => [n, { p50: quantile(times[n]!, 0.5), p99: quantile(times[n]!, 0.99) }]),
  );
}

let counter = 0;
const message = (fields: Partial<NewMessage> = {}): NewMessage => ({
  id: `m-${++counter}`,
  role: 'user',
  content: 'x'.repeat(220),
  createdAt: new Date().toISOString(),
  ...fields,
});
const withSeqs = (batch: NewMessage[], expectedSeq: number): MessageRecord[] =>
  batch.map((m, i) => ({ ...m, seq: expectedSeq + i + 1 }));

const server = await launchPostgres();
const pool = new pg.Pool({ connectionString: server.info.url, max: 4 });
const schema = `bench_${process.pid}`;
const { rows: version } = await pool.query('SHOW server_version');
try {
  const store = postgresStore({ pool }, { schema });
  await store.migrate();
  const { floor } = postgresCapabilities(() => pool, schema);
  const init = { agentName: 'bench', ownerId: null, tenantId: null, state: null };

  const noop = await compare(200, APPEND_SAMPLES, {
    roundTrip: () => pool.query({ name: 'bench_noop', text: 'SELECT 1' }),
  });

  // Append: 3 messages of ~300 bytes each, to sessions that exist.
  const heads = { store: 1, floor: 1 };
  await store.append('bench-store', {
    expectedSeq: 0,
    messages: [message()],
    session: { init },
    lease: null,
  });
  await store.append('bench-floor', {
    expectedSeq: 0,
    messages: [message()],
    session: { init },
    lease: null,
  });
  const batch = () => [message(), message(), message()];
  const append = await compare(200, APPEND_SAMPLES, {
    store: async () => {
      heads.store = (
        await store.append('bench-store', { expectedSeq: heads.store, messages: batch(), lease: null })
      ).headSeq;
    },
    floor: async () => {
      const rows = withSeqs(batch(), heads.floor);
      await floor.append('bench-floor', heads.floor, rows);
      heads.floor += rows.length;
    },
  });

  // 10-step loop: run() with one tool call per step vs the 20 floor appends it minimally needs.
  const STEPS = 10;
  const steps: ScriptStep[] = [
    ...Array.from({ length: STEPS }, (_, n) => ({
      text: `step ${n}`,
      toolCalls: [{ name: 'work', input: { n } }],
    })),
    { text: 'done' },
  ];
  const anyInput = {
    '~standard': { version: 1 as const, vendor: 'bench', validate: (value: unknown) => ({ value }) },
  };
  const agent = defineAgent({
    name: 'bench-agent',
    instructions: 'Work ten steps.',
    maxIterations: STEPS + 1,
    tools: {
      work: tool({ description: 'work', input: anyInput, safeToRetry: true, handler: () => ({ ok: true }) }),
    },
  });
  const memory = durableMemoryStore();
  let loopSession = 0;
  await store.append('bench-loop-floor', {
    expectedSeq: 0,
    messages: [message()],
    session: { init },
    lease: null,
  });
  let floorHead = 1;
  const loop = await compare(5, LOOP_SAMPLES, {
    store: async () => {
      const result = await run(agent, {
        store,
        sessionId: `loop-${++loopSession}`,
        message: 'go',
        llm: scriptedLlm(steps),
      });
      if (result.status !== 'complete') throw new Error(result.status);
    },
    floor: async () => {
      for (let n = 0; n < STEPS; n++) {
        const call = { id: `call_${n}`, name: 'work', input: { n } };
        for (const write of [
          [message({ role: 'assistant', content: `step ${n}`, toolCalls: [call] })],
          [message({ role: 'tool', content: '{"ok":true}', toolCallId: call.id, toolName: 'work' })],
        ]) {
          await floor.append('bench-loop-floor', floorHead, withSeqs(write, floorHead));
          floorHead += write.length;
        }
      }
    },
    memory: async () => {
      await run(agent, {
        store: memory,
        sessionId: `mem-${++loopSession}`,
        message: 'go',
        llm: scriptedLlm(steps),
      });
    },
  });

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `PostgreSQL ${version[0].server_version}, ${server.owned ? 'throwaway server (launcher)' : 'AGENTSTORE_PG_URL'}`,
  );
  console.log(
    `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`,
  );
  console.log(
    `\nno-op round trip (prepared SELECT 1): p50 ${us(noop.roundTrip!.p50)}, p99 ${us(noop.roundTrip!.p99)}`,
  );
  console.log(`\n| ${APPEND_SAMPLES} samples, interleaved | p50 | p99 |`);
  console.log('|---|---|---|');
  console.log(`| store.append, 3 × ~300 B | ${us(append.store!.p50)} | ${us(append.store!.p99)} |`);
  console.log(`| floor (one prepared guarded CTE) | ${us(append.floor!.p50)} | ${us(append.floor!.p99)} |`);
  console.log(
    `| ratio | ${(append.store!.p50 / append.floor!.p50).toFixed(2)}× | ${(append.store!.p99 / append.floor!.p99).toFixed(2)}× |`,
  );
  console.log(`\n| 10-step loop, ${LOOP_SAMPLES} samples | p50 | p99 |`);
  console.log('|---|---|---|');
  console.log(`| run() on postgresStore | ${fmt(loop.store!.p50)} | ${fmt(loop.store!.p99)} |`);
  console.log(`| 20 floor appends | ${fmt(loop.floor!.p50)} | ${fmt(loop.floor!.p99)} |`);
  console.log(
    `| run() on durableMemoryStore (loop CPU only) | ${fmt(loop.memory!.p50)} | ${fmt(loop.memory!.p99)} |`,
  );
  console.log(
    `| ratio run() / floor | ${(loop.store!.p50 / loop.floor!.p50).toFixed(2)}× | ${(loop.store!.p99 / loop.floor!.p99).toFixed(2)}× |`,
  );
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
  await server.stop();
}
