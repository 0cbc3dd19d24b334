import type { ConformanceTarget } from '../target.ts';

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
  | { t: 'probe'; result: string };

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
}
