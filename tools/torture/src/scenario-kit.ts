import type { AgentStore } from '@agentstore/core';
import type { OpenTestTarget, RawReader } from '@agentstore/core/testing';
import type { Ledger } from './ledger.ts';
import type { WorkerLine } from './protocol.ts';
import { startWorker, type Worker } from './worker-process.ts';

/** What every scenario of one store shares. */
export interface StoreContext {
  storeName: string;
  target: OpenTestTarget;
  /** The parent's own store and raw reader on the same data, for the checks. */
  store: AgentStore;
  raw: RawReader;
  ledger: Ledger;
  seed: number;
  /** Keeps session ids unique across invocations on a shared (AGENTSTORE_*_URL) server. */
  nonce: string;
  /** A clean run's duration (worker ready → done): kill delays are drawn over it. Only shrinks. */
  runMs: number;
  cwd?: string;
  /** Every session a worker was started on: deleted when the store's torture ends. */
  created: Set<string>;
}

/** How long a worker may take before the harness calls it hung (a violation, then SIGKILL). */
const WORKER_DEADLINE_MS = 120_000;

export interface WorkerRun {
  worker: Worker;
  lines: WorkerLine[];
  /** The SIGKILL landed while the worker was still running. */
  killed: boolean;
  completed: boolean;
  /** The error the worker's run ended with, by code or name. */
  error: string | null;
  hung: boolean;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Tallies error names: `{ SEQ_CONFLICT: 2 }`. */
export function tally(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

export function spawnWorker(
  ctx: StoreContext,
  sessionId: string,
  lease: { ttlMs: number; waitMs: number },
  probeAfterLeaseLost = false,
  partition?: { handlerDelayMs: number },
): Worker {
  ctx.created.add(sessionId);
  return startWorker(
    {
      module: ctx.target.module!,
      ...(ctx.target.reopen ? { options: ctx.target.reopen } : {}),
      sessionId,
      ledgerUrl: ctx.ledger.url,
      leaseTtlMs: lease.ttlMs,
      leaseWaitMs: lease.waitMs,
      ...(probeAfterLeaseLost ? { probeAfterLeaseLost } : {}),
      ...(partition ? { partition } : {}),
    },
    ctx.cwd ? { cwd: ctx.cwd } : {},
  );
}

/** A lease-less append racer on `sessionId`, started gated: it appends once `go()` is called. */
export function spawnAppendRacer(ctx: StoreContext, sessionId: string, appends: number): Worker {
  ctx.created.add(sessionId);
  return startWorker(
    {
      module: ctx.target.module!,
      ...(ctx.target.reopen ? { options: ctx.target.reopen } : {}),
      sessionId,
      ledgerUrl: ctx.ledger.url,
      leaseTtlMs: 0,
      leaseWaitMs: 0,
      appendRace: { appends },
    },
    { ...(ctx.cwd ? { cwd: ctx.cwd } : {}), gated: true },
  );
}

/** Deletes every session the torture created on this store (what it proves is in its report). */
export async function deleteCreated(store: AgentStore, created: Set<string>): Promise<void> {
  for (const sessionId of created) await store.deleteSession(sessionId);
  created.clear();
}

/** Waits for a worker to exit; `killAfterMs` (from its ready line) SIGKILLs its process group. */
export async function finishWorker(worker: Worker, killAfterMs: number | null = null): Promise<WorkerRun> {
  let killSent = false;
  let killTimer: NodeJS.Timeout | undefined;
  if (killAfterMs !== null) {
    void worker.ready.then(() => {
      killTimer = setTimeout(() => {
        killSent = worker.signal('SIGKILL');
      }, killAfterMs);
    });
  }
  let hung = false;
  const deadline = setTimeout(() => {
    hung = true;
    worker.signal('SIGKILL');
  }, WORKER_DEADLINE_MS);
  const exit = await worker.exited;
  clearTimeout(deadline);
  clearTimeout(killTimer);
  const done = worker.lines.find((line) => line.t === 'done');
  const failed = worker.lines.find((line) => line.t === 'error');
  return {
    worker,
    lines: worker.lines,
    killed: killSent && exit.signal === 'SIGKILL' && !done && !hung,
    completed: done?.t === 'done' && done.status === 'complete',
    error: failed?.t === 'error' ? (failed.code ?? failed.name) : exit.code === 0 || killSent ? null : 'EXIT',
    hung,
  };
}

/** Describes a worker that ended without completing and without being killed (for the report). */
export function exitProblem(run: WorkerRun): string | null {
  if (run.hung) return `worker ${run.worker.pid} hung (killed after ${WORKER_DEADLINE_MS} ms)`;
  if (run.error === 'EXIT')
    return `worker ${run.worker.pid} crashed on its own: ${run.worker.stderr().slice(-800)}`;
  return null;
}
