import { type AgentStore, run } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import { perRoundRatio, type RatioSpread, ratioSpread } from './rounds.ts';
import { median, round } from './stats.ts';
import { floorSession, floorWriter } from './step.ts';
import { benchAgent, fixedLatencyLlm, stepMessages } from './workload.ts';

/** Steps per second over repeated rounds: the median round, and the lowest and highest. */
export interface RateSpread {
  median: number;
  min: number;
  max: number;
}

export interface ThroughputResult {
  concurrency: number;
  /** Whole `steps`-step sessions per round (each worker takes the next until the time box ends). */
  sessionsPerRound: number[];
  steps: number;
  /** Tool steps per second through `run()` (no model latency). */
  store: RateSpread;
  /** The same sessions driven through the floor: per step, the call and the result as two appends. */
  floor: RateSpread | null;
  /** store ÷ floor, per round. */
  storeVsFloor: RatioSpread | null;
}

export interface ThroughputSampling {
  levels: number[];
  rounds: number;
  steps: number;
  payloadBytes: number;
  /** Each side of each round takes sessions until this much time has passed (at least `concurrency` sessions). */
  budgetMs: number;
  /** Never more sessions than this per side and round. */
  maxSessions: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** `work(i)` on `concurrency` workers, each taking the next index until the time box ends. */
async function timeBoxed(
  concurrency: number,
  budgetMs: number,
  maxSessions: number,
  work: (i: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<{ sessions: number; elapsedMs: number }> {
  let next = 0;
  const start = performance.now();
  const more = () => next < maxSessions && (next < concurrency || performance.now() - start < budgetMs);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (more()) {
        signal?.throwIfAborted();
        await work(next++);
      }
    }),
  );
  return { sessions: next, elapsedMs: performance.now() - start };
}

const rate = (perRound: number[]): RateSpread => ({
  median: round(median(perRound)),
  min: round(Math.min(...perRound)),
  max: round(Math.max(...perRound)),
});

/**
 * Steps/s at each concurrency level through the store (whole `run()` sessions on fresh ids) and
 * through the floor driven the same way (the same number of workers, each session's steps as two
 * floor appends), alternating store and floor in every round.
 */
export async function measureThroughput(
  store: AgentStore,
  floor: RawAppendFloor | null,
  newId: (label: string) => string,
  sampling: ThroughputSampling,
): Promise<ThroughputResult[]> {
  const { levels, rounds, steps, payloadBytes, budgetMs, maxSessions, signal } = sampling;
  const agent = benchAgent(steps, payloadBytes);
  // Floor sessions exist before the clock starts; a pool as large as one round can use.
  const pool = floor
    ? await Promise.all(
        Array.from({ length: Math.max(...levels) }, async () =>
          floorWriter(floor, await floorSession(store, newId('throughput-floor'))),
        ),
      )
    : [];
  const results: ThroughputResult[] = [];
  const total = levels.length * rounds;
  let done = 0;
  for (const concurrency of levels) {
    const storeRates: number[] = [];
    const floorRates: number[] = [];
    const sessionsPerRound: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const storeSide = async () => {
        const { sessions, elapsedMs } = await timeBoxed(
          concurrency,
          budgetMs,
          maxSessions,
          async () => {
            const result = await run(agent, {
              store,
              sessionId: newId(`c${concurrency}`),
              message: 'go',
              llm: fixedLatencyLlm(steps, 0),
            });
            if (result.status !== 'complete') throw new Error(`a run ended with status ${result.status}`);
          },
          signal,
        );
        sessionsPerRound.push(sessions);
        storeRates.push((sessions * steps) / (elapsedMs / 1000));
      };
      const floorSide = async () => {
        // Worker w always writes to pool session w: no two workers race one head.
        const busy = new Set<number>();
        const { sessions, elapsedMs } = await timeBoxed(
          concurrency,
          budgetMs,
          maxSessions,
          async () => {
            const slot = pool.findIndex((_, i) => !busy.has(i));
            busy.add(slot);
            try {
              for (let n = 0; n < steps; n++) {
                const [call, result] = stepMessages(n, payloadBytes);
                await pool[slot]!([call]);
                await pool[slot]!([result]);
              }
            } finally {
              busy.delete(slot);
            }
          },
          signal,
        );
        floorRates.push((sessions * steps) / (elapsedMs / 1000));
      };
      // Alternate which side goes first, so drift within a round hits both alike.
      if (r % 2 === 0) {
        await storeSide();
        if (floor) await floorSide();
      } else {
        if (floor) await floorSide();
        await storeSide();
      }
      sampling.onProgress?.(++done, total);
    }
    results.push({
      concurrency,
      sessionsPerRound,
      steps,
      store: rate(storeRates),
      floor: floor ? rate(floorRates) : null,
      storeVsFloor: floor ? ratioSpread(perRoundRatio(storeRates, floorRates)) : null,
    });
  }
  return results;
}
