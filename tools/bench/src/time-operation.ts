import type { AgentStore, DeleteIdleSessionsResult, NewMessage } from '@agentstore/core';
import { describeMachine, type MachineInfo, machineInfo } from './machine.ts';
import { percentile } from './stats.ts';

/**
 * Runs `op` `warmup + samples` times in a row and describes the timed samples as
 * "median (p10–p90)" in ms: for scale scripts, where one figure per operation is the point and
 * the spread shows how noisy the machine was.
 */
export async function timeOperation(
  samples: number,
  op: () => Promise<unknown>,
  warmup = 3,
): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const start = performance.now();
    await op();
    if (i >= warmup) times.push(performance.now() - start);
  }
  const ms = (q: number) => percentile(times, q).toFixed(2);
  return `${ms(0.5)} (${ms(0.1)}–${ms(0.9)})`;
}

/**
 * Seeds a scale data set: `sessions` sessions of two messages each (ids `s-00000000`…, owner,
 * tenant and agent spread as a real population would be), `concurrency` appends at a time. The
 * first tenth is created before `cutoff` and the rest after, so a retention sweep at `cutoff`
 * finds exactly that tenth idle.
 */
export async function seedScaleSessions(
  store: AgentStore,
  sessions: number,
  concurrency: number,
  message: (i: number) => NewMessage,
): Promise<{ cutoff: string; seedSeconds: number }> {
  const create = async (from: number, to: number) => {
    for (let s = from; s < to; s += concurrency) {
      await Promise.all(
        Array.from({ length: Math.min(concurrency, to - s) }, (_, j) =>
          store.append(`s-${String(s + j).padStart(8, '0')}`, {
            expectedSeq: 0,
            messages: [message(0), message(1)],
            session: {
              init: {
                agentName: `agent-${(s + j) % 20}`,
                ownerId: `owner-${(s + j) % Math.max(1, sessions / 10)}`,
                tenantId: `tenant-${(s + j) % 50}`,
                state: {},
              },
            },
            lease: null,
          }),
        ),
      );
    }
  };
  const start = performance.now();
  await create(0, sessions / 10);
  // Clear of the creation times on either side, so the cutoff splits the set exactly.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const cutoff = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await create(sessions / 10, sessions);
  return { cutoff, seedSeconds: (performance.now() - start) / 1000 };
}

/** One whole retention sweep, batch after batch: what a scale script reports about it. */
export async function sweepIdleSessions(
  store: AgentStore,
  idleBefore: string,
  limit: number,
): Promise<{ deleted: number; batches: number; seconds: number; batchMs: { median: number; max: number } }> {
  const start = performance.now();
  const batchTimes: number[] = [];
  let cursor: string | null = null;
  let deleted = 0;
  do {
    const batchStart = performance.now();
    const page: DeleteIdleSessionsResult = await store.deleteIdleSessions({ idleBefore, limit, cursor });
    batchTimes.push(performance.now() - batchStart);
    deleted += page.deleted.length;
    cursor = page.nextCursor;
  } while (cursor !== null);
  return {
    deleted,
    batches: batchTimes.length,
    seconds: (performance.now() - start) / 1000,
    batchMs: { median: percentile(batchTimes, 0.5), max: Math.max(...batchTimes) },
  };
}

/** Prints a scale script's tables (one per data-set size) as markdown, then the load at the end. */
export function printScaleReport(
  title: string,
  samples: number,
  columns: [string, string, string],
  results: { label: string; rows: [string, string, string][] }[],
  /** `machineInfo()` taken before the runs (its load average is the one at start). */
  atStart: MachineInfo,
): void {
  console.log(
    `# ${title} — ${describeMachine(atStart)}, ${samples} samples per figure, ms median (p10–p90)\n`,
  );
  for (const { label, rows } of results) {
    console.log(`## ${label}\n\n| ${columns.join(' | ')} |\n|---|---|---|`);
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
    console.log('');
  }
  console.log(`load average at end ${machineInfo().loadAverage.join(' ')}`);
}
