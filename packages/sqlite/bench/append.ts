/**
 * Append p50/p99 of the store vs the hand-written raw better-sqlite3 floor, same run, same
 * workload as NOTES.md (3 × 300-byte messages + guarded session update per append).
 * Run: pnpm exec node --conditions=@agentstore/source bench/append.ts [iterations]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageRecord, NewMessage } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { type SynchronousMode, sqliteStore } from '../src/index.ts';
import { rawFloor } from '../src/testing/capabilities.ts';

const iterations = Number(process.argv[2] ?? 2000);
const content = 'x'.repeat(300);

const batch = (step: number): NewMessage[] =>
  [0, 1, 2].map((i) => ({
    id: `m-${step}-${i}`,
    role: i === 0 ? 'assistant' : 'tool',
    content,
    createdAt: new Date().toISOString(),
  }));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function measure(label: string, path: string, synchronous: SynchronousMode | null) {
  // `:memory:` cannot be shared between connections, so the floor runs on the store's own one.
  const memory = path === ':memory:' ? new BetterSqlite3(':memory:') : null;
  const store = memory
    ? sqliteStore({ database: memory })
    : sqliteStore({ path }, { synchronous: synchronous! });
  await store.migrate();
  // The floor gets its own connection to the file, at the same durability level as the store.
  const floorDb = memory ?? new BetterSqlite3(path);
  if (!memory) floorDb.pragma(`synchronous = ${synchronous}`);
  const floor = rawFloor({ connection: { database: floorDb } }, floorDb);

  const { epoch } = await store.acquireLease('bench-store', {
    holder: 'bench',
    ttlMs: 600_000,
    init: { agentName: 'bench', ownerId: null, tenantId: null, state: null },
  });
  await store.append('bench-floor', { expectedSeq: 0, messages: batch(0), lease: null });
  let storeHead = 0;
  let floorHead = 3;
  const storeTimes: number[] = [];
  const floorTimes: number[] = [];
  for (let i = 0; i < iterations; i++) {
    // Interleaved so drift (other load, WAL growth) hits both sides alike.
    let start = process.hrtime.bigint();
    const { headSeq } = await store.append('bench-store', {
      expectedSeq: storeHead,
      messages: batch(i),
      lease: { holder: 'bench', epoch },
      session: { state: { step: i } },
    });
    storeTimes.push(Number(process.hrtime.bigint() - start) / 1000);
    storeHead = headSeq;
    const records: MessageRecord[] = batch(i).map((m, k) => ({ ...m, seq: floorHead + k + 1 }));
    start = process.hrtime.bigint();
    await floor.append('bench-floor', floorHead, records);
    floorTimes.push(Number(process.hrtime.bigint() - start) / 1000);
    floorHead += 3;
  }
  storeTimes.sort((a, b) => a - b);
  floorTimes.sort((a, b) => a - b);
  const row = {
    config: label,
    storeP50: percentile(storeTimes, 0.5).toFixed(1),
    storeP99: percentile(storeTimes, 0.99).toFixed(1),
    floorP50: percentile(floorTimes, 0.5).toFixed(1),
    floorP99: percentile(floorTimes, 0.99).toFixed(1),
    ratioP50: (percentile(storeTimes, 0.5) / percentile(floorTimes, 0.5)).toFixed(2),
  };
  await store.close();
  floorDb.close();
  return row;
}

const dir = mkdtempSync(join(tmpdir(), 'agentstore-sqlite-bench-'));
try {
  const rows = [
    await measure(':memory:', ':memory:', null),
    await measure('WAL + NORMAL', join(dir, 'normal.db'), 'NORMAL'),
    await measure('WAL + FULL', join(dir, 'full.db'), 'FULL'),
  ];
  console.log(
    `${iterations} appends of 3 × 300-byte messages; µs; ${cpus()[0]?.model} × ${cpus().length}, Node ${process.version}`,
  );
  console.table(rows);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
