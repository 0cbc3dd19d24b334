import type { ConformanceTarget } from '../target.ts';

/** Lines a child writes to stdout, one JSON object each, after this prefix. */
export const CHILD_LINE_PREFIX = '@@agentstore-process ';

export type ChildLine =
  | { t: 'ready'; pid: number }
  /** Written synchronously before the append is sent. */
  | { t: 'start'; batch: number; expectedSeq: number; ids: string[] }
  /** An append the store acknowledged, written synchronously before anything else can happen. */
  | { t: 'ack'; batch: number; ids: string[]; headSeq: number }
  /** A tool handler ran its side effect (written before the handler returns). */
  | { t: 'effect'; tool: string; toolCallId: string }
  | { t: 'done'; status: string }
  | { t: 'error'; code: string | null; message: string };

/** What the parent hands a child (argv[2], JSON). */
export interface ChildConfig {
  /** The target module and the options that open the same data (`ConformanceTarget.module`, `.reopen`). */
  module: string;
  options?: ConformanceTarget['reopen'];
  sessionId: string;
  mode: 'appends' | 'run';
  /** appends: how many batches to write (the child is usually killed first). */
  batches: number;
  /** Arm the self-kill after this many acknowledged appends (appends) or at the start (run). */
  armAfter: number;
  /** SIGKILL itself on this event-loop turn after arming; 0: never. */
  killAtTurn: number;
  /** appends: SIGKILL itself this fraction of the median append duration after arming (a kill thread). */
  killAtFraction?: number;
  leaseTtlMs: number;
}
