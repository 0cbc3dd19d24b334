import type { ConformanceTarget } from '@agentstore/core/testing';

/** Lines a worker writes to stdout, one JSON object each, after this prefix. */
export const LINE_PREFIX = '@@torture ';

export type WorkerLine =
  | { t: 'ready'; pid: number }
  | { t: 'lease'; epoch: number; holder: string }
  /** An append the store acknowledged, written synchronously before anything else can happen. */
  | { t: 'ack'; ids: string[]; headSeq: number; epoch: number }
  | { t: 'append-error'; name: string; code: string | null }
  | { t: 'done'; status: string; headSeq: number }
  | { t: 'error'; name: string; code: string | null; message: string }
  /** Fencing: a direct append with the stale lease at the current head (must be refused). */
  | { t: 'probe'; result: string }
  /** Partition: a handler started (it then waits on its slow downstream before the effect). */
  | { t: 'handler'; toolCallId: string };

/** What the parent hands a worker (argv[2], JSON). */
export interface WorkerConfig {
  /** The target module and the options that open the same data (`target.module`, `target.reopen`). */
  module: string;
  options?: ConformanceTarget['reopen'];
  sessionId: string;
  ledgerUrl: string;
  leaseTtlMs: number;
  leaseWaitMs: number;
  /** After a LeaseLostError (or SeqConflictError), try one append with the stale lease at the current head. */
  probeAfterLeaseLost?: boolean;
  /**
   * Partition: every lease renewal of this worker hangs (the database is unreachable) while its
   * handlers still reach the outside world; each handler waits `handlerDelayMs` (a slow
   * downstream), then honours `ctx.signal` right before its effect, as the docs ask.
   */
  partition?: { handlerDelayMs: number };
  /**
   * Append race: no run() and no lease — wait for `go` on stdin, then append one message at a time
   * at the loaded head (reloading on SeqConflictError) until `appends` are acknowledged.
   */
  appendRace?: { appends: number };
}
