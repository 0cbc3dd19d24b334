import type { NewMessage } from '@agentstore/core';
import type { D1AgentStore, D1DatabaseLike } from '../../src/index.ts';
import { d1Floor } from '../../src/testing/capabilities.ts';

export interface BenchOptions {
  rounds: number;
  appendsPerRound: number;
  messagesPerAppend: number;
  messageBytes: number;
}

export interface BenchReport extends BenchOptions {
  /** Mean µs per append in each round (Date.now() over the whole round; workerd's clock is 1 ms). */
  storeRoundsUs: number[];
  floorRoundsUs: number[];
  noopRoundsUs: number[];
  medianStoreUs: number;
  medianFloorUs: number;
  medianNoopUs: number;
  /** medianStoreUs / medianFloorUs. */
  ratio: number;
  /** Median over rounds of (store / floor) within the round: robust to load that shifts between rounds. */
  pairedRatio: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const batchOf = (count: number, bytes: number, tag: string): NewMessage[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `${tag}-${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: 'x'.repeat(bytes),
    createdAt: new Date().toISOString(),
  }));

/** Runs `work` `n` times back to back and returns the mean µs per call. */
async function timed(n: number, work: (i: number) => Promise<unknown>): Promise<number> {
  const start = Date.now();
  for (let i = 0; i < n; i++) await work(i);
  return ((Date.now() - start) * 1000) / n;
}

/**
 * The store's append (guard with seq and lease, session upsert with state, message INSERT)
 * against the floor (a hand-written guarded batch: head guard, head UPDATE, INSERT) and a
 * no-op round trip, interleaved round by round in one worker so drift hits all three alike.
 */
export async function benchAppends(
  store: D1AgentStore,
  db: D1DatabaseLike,
  options: BenchOptions,
): Promise<BenchReport> {
  const floor = d1Floor(db, store.tables);
  const init = { agentName: 'bench', ownerId: null, tenantId: null, state: null };
  const storeRoundsUs: number[] = [];
  const floorRoundsUs: number[] = [];
  const noopRoundsUs: number[] = [];
  const { rounds, appendsPerRound: n, messagesPerAppend: k, messageBytes } = options;
  const noop = db.prepare('SELECT 1');

  for (let round = 0; round < rounds; round++) {
    const storeId = `bench-store-${round}-${crypto.randomUUID()}`;
    const floorId = `bench-floor-${round}-${crypto.randomUUID()}`;
    const { epoch } = await store.acquireLease(storeId, { holder: 'bench', ttlMs: 600_000, init });
    await store.append(floorId, {
      expectedSeq: 0,
      messages: batchOf(1, 10, 'seed'),
      lease: null,
      session: { init },
    });

    const runStore = () =>
      timed(n, (i) =>
        store.append(storeId, {
          expectedSeq: i * k,
          messages: batchOf(k, messageBytes, `s${i}`),
          lease: { holder: 'bench', epoch },
          session: { state: { step: i } },
        }),
      );
    const runFloor = () =>
      timed(n, (i) =>
        floor.append(
          floorId,
          1 + i * k,
          batchOf(k, messageBytes, `f${i}`).map((m, j) => ({ ...m, seq: 2 + i * k + j })),
        ),
      );
    // Alternate which goes first so neither always runs on a warmer database.
    if (round % 2 === 0) {
      storeRoundsUs.push(await runStore());
      floorRoundsUs.push(await runFloor());
    } else {
      floorRoundsUs.push(await runFloor());
      storeRoundsUs.push(await runStore());
    }
    noopRoundsUs.push(await timed(n, () => noop.all()));
  }
  const medianStoreUs = median(storeRoundsUs);
  const medianFloorUs = median(floorRoundsUs);
  return {
    ...options,
    storeRoundsUs,
    floorRoundsUs,
    noopRoundsUs,
    medianStoreUs,
    medianFloorUs,
    medianNoopUs: median(noopRoundsUs),
    ratio: medianStoreUs / medianFloorUs,
    pairedRatio: median(storeRoundsUs.map((us, i) => us / floorRoundsUs[i]!)),
  };
}
