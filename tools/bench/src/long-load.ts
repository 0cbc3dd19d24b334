import type { AgentStore, LoadResult, NewMessage } from '@agentstore/core';
import { describeMachine, type MachineInfo } from './machine.ts';

const MESSAGES = Number(process.env.LONG_MESSAGES ?? 100_000);
const SAMPLES = Number(process.env.LONG_SAMPLES ?? 5);

const message = (i: number): NewMessage => ({
  id: `m${i}`,
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `${i} ${'x'.repeat(200)}`,
  createdAt: '2026-01-01T00:00:00.000Z',
});

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Appends MESSAGES messages to one session (appends as large as the store allows), then loads it
 * SAMPLES times: per load the time, and (run with --expose-gc) the heap still held with the
 * result alive and the process RSS, each as a delta from just before the load (the heap figure
 * from the first load, into a clean heap). Prints one markdown block.
 */
export async function measureLongLoad(label: string, store: AgentStore, machine: MachineInfo): Promise<void> {
  if (!gc) throw new Error('run with node --expose-gc (the package script does)');
  const id = `long-${Date.now().toString(36)}`;
  const batch = Math.min(500, store.limits.maxMessagesPerAppend);
  const seedStart = performance.now();
  for (let seq = 0; seq < MESSAGES; seq += batch) {
    const messages = Array.from({ length: Math.min(batch, MESSAGES - seq) }, (_, i) => message(seq + i + 1));
    await store.append(id, {
      expectedSeq: seq,
      messages,
      session:
        seq === 0 ? { init: { agentName: 'long', ownerId: null, tenantId: null, state: null } } : undefined,
      lease: null,
    });
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const rows: { ms: number; heap: number; rss: number }[] = [];
  let resultBytes = 0;
  // Outside the loop and cleared first: an async function keeps its locals alive across awaits,
  // so the previous result would otherwise still be on the heap when `before` is read.
  let loaded: LoadResult | null = null;
  for (let i = 0; i < SAMPLES; i++) {
    loaded = null;
    gc();
    const before = process.memoryUsage();
    const start = performance.now();
    loaded = await store.load(id);
    const ms = performance.now() - start;
    gc();
    const after = process.memoryUsage();
    if (loaded?.messages.length !== MESSAGES) throw new Error(`loaded ${loaded?.messages.length} messages`);
    resultBytes = loaded.messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    rows.push({ ms, heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss });
  }
  const ms = rows.map((r) => r.ms);
  // The first load's figures: later ones replace a result still held somewhere (the delta is ~0).
  const heap = rows[0]!.heap;
  console.log(`\n### ${label}: load of one ${MESSAGES.toLocaleString('en')}-message session\n`);
  console.log(`Machine: ${describeMachine(machine)} (shared with other work: times are indicative).`);
  console.log(`Seeded in ${seedSeconds.toFixed(0)} s with appends of ${batch}. ${SAMPLES} loads.\n`);
  console.log(
    '| load time ms, median (min–max) | result (message JSON) | heap held with the result (first load) | RSS growth, first load / later (median) |',
  );
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| ${median(ms).toFixed(0)} (${Math.min(...ms).toFixed(0)}–${Math.max(...ms).toFixed(0)}) | ${mb(resultBytes)} MB | ${mb(heap)} MB (${(heap / resultBytes).toFixed(2)}× the JSON) | ${mb(rows[0]!.rss)} MB / ${mb(median(rows.slice(1).map((r) => r.rss)))} MB |`,
  );
}
