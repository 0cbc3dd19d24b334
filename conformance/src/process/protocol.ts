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
  /**
   * appends: batches at the head until killed; run: the agent; race: one message at a time at the
   * loaded head, reloading on SeqConflictError, until `batches` are acknowledged (never killed),
   * started when the parent writes `go` to stdin, so several children race from the same moment.
   */
  mode: 'appends' | 'run' | 'race';
  /** appends: how many batches to write (the child is usually killed first); race: how many to have acknowledged. */
  batches: number;
  /** Arm the self-kill after this many acknowledged appends (appends) or at the start (run). */
  armAfter: number;
  /** SIGKILL itself on this event-loop turn after arming; 0: never. */
  killAtTurn: number;
  /** appends: SIGKILL itself this fraction of the median append duration after arming (a kill thread). */
  killAtFraction?: number;
  leaseTtlMs: number;
}
