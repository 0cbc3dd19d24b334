import type { LlmAdapter, Usage } from '../llm.ts';
import type { UserContentInput } from '../message-parts.ts';
import type { MessageRecord } from '../records.ts';
import type { AgentStore } from '../store/contract.ts';
import type { AnyTool } from '../tool.ts';
import type { ApprovalDecision, PendingApproval } from './approvals.ts';
import type { BackgroundErrorHandler } from './background-errors.ts';
import type { UserMessage } from './content-input.ts';

export interface RunOptions {
  /** A durable store plus a `sessionId` turns on durable mode. */
  store?: AgentStore;
  sessionId?: string;
  /**
   * The user's message; optional when resuming a session. A string, or an array of text and file
   * parts as the AI SDK's user content takes them (`{ type: 'file', mediaType, data }`, `data` as
   * base64 text, bytes or a URL). Files are stored inline, so they count toward the store's limits.
   */
  message?: string | UserContentInput[];
  /**
   * A stable id for `message` (e.g. the id of the HTTP request or queue delivery). When the
   * session already holds a message with this id, it is not appended again and the run resumes:
   * retrying a run whose process died is then safe whether or not the message had landed.
   */
  messageId?: string;
  llm: LlmAdapter;
  /** Added to (and overriding by name) the agent's tools. */
  tools?: Record<string, AnyTool>;
  ownerId?: string | null;
  tenantId?: string | null;
  /**
   * Cancels the run: nothing new starts and handlers see `ctx.signal` abort; results of handlers
   * that finished are still sent, in order, after run() has rejected if need be, until they land
   * or the lease's local deadline passes (a failure goes to `onBackgroundError`). run() rejects
   * with the abort reason without waiting for a store call still unanswered one event-loop turn
   * after the abort (a half-open connection): the next run settles such an append by re-reading.
   * The lease is released once those calls settle, or lapses after its TTL if one never does.
   */
  signal?: AbortSignal;
  /**
   * Lease time-to-live, 10 ms to 24 h; renewed every quarter of it while the run works. The run
   * stops starting work (and aborts `ctx.signal`) a fifth of it before the store would let another
   * worker take over, counted from the send of the last renewal that answered. Default 30 s.
   */
  leaseTtlMs?: number;
  /**
   * How long to wait for a busy session's lease (e.g. one a crashed process left behind) before
   * throwing `SessionBusyError`. Polls every 25–250 ms (backoff with jitter), so a released lease
   * is taken promptly. Default 0: throw at once.
   */
  leaseWaitMs?: number;
  /** Decisions for calls the session waits on (`status: 'awaiting-approval'`), by tool-call id. */
  approvals?: Record<string, ApprovalDecision>;
  /**
   * Where a lease-call failure goes when no caller can be told of it: the release after an
   * acquire or append the caller abandoned; a release run() stopped waiting for (the caller
   * aborted, or the lease's safe window passed); a release that failed after the run failed with
   * an error not of agentstore's making (left unchanged: the caller's abort reason or a model
   * client's error may be shared by several runs), a value that cannot carry `leaseReleaseError`
   * or the release's own error; an abandoned acquire that failed without a definite answer. Each
   * means the session may stay busy until the lease expires. Default: `console.warn`. Called in
   * a promise job of its own; it must not throw: a throw becomes an unhandled rejection. Also
   * called when an append of finished tools' results, still sent after run() rejected on the
   * caller's abort, fails (`operation: 'append'`): those calls are then orphaned for the next run.
   */
  onBackgroundError?: BackgroundErrorHandler;
}

export interface RunResult {
  status: 'complete' | 'max-iterations' | 'awaiting-approval';
  /** The final assistant text. */
  response: string;
  sessionId: string | null;
  headSeq: number;
  /** Every message of the session, as stored. */
  messages: MessageRecord[];
  /** Tokens used by this run's model calls. */
  usage: Usage;
  /** The calls waiting for a human when `status` is `awaiting-approval`; otherwise empty. */
  pendingApprovals: PendingApproval[];
  /** Set when everything committed but releasing the lease failed (it then expires after its TTL). */
  leaseReleaseError?: unknown;
}

/** The options as the loop uses them: the user's message read and encoded once, by checkRunOptions. */
export type LoopOptions = RunOptions & { user: UserMessage | undefined };
