import type { MessagePart, ModelCallUsage } from './message-parts.ts';

/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  input: JsonValue;
}

/** The single-writer lease on a session. `epoch` is a fencing token bumped by every grant. */
export interface Lease {
  holder: string;
  epoch: number;
  /** ISO-8601. */
  expiresAt: string;
}

export interface SessionRecord {
  id: string;
  agentName: string;
  ownerId: string | null;
  tenantId: string | null;
  state: JsonValue;
  /** Seq of the last message; 0 when the session has none. */
  headSeq: number;
  lease: Lease | null;
  createdAt: string;
  updatedAt: string;
  /**
   * Fixed when the session is created and different for every creation, so a session re-created
   * under a deleted session's id is a distinct incarnation: it scopes the tool calls' idempotency
   * keys. Absent on sessions created before stores recorded it (their keys keep the old formula).
   */
  incarnationId?: string;
}

/**
 * How a tool result came to be, recorded by `run()` on every tool message it writes:
 * - `handler`: the handler ran and returned (or threw) on attempt `attempt` (1 = first
 *   invocation, 2 = re-invoked after one or more crashes; an earlier attempt may have run);
 * - `reconciled`: an interrupted call's `reconcile` reported the effect happened;
 * - `durability-error`: an interrupted call that could be neither reconciled nor re-invoked;
 * - `rejected`: a human rejected the call; `cancelled`: the run was cancelled before it started;
 * - `invalid-call`: unknown tool, input that failed the tool's schema, or a call the model's reply
 *   could not store as made (input not plain JSON or too big, tool name not well-formed): it never ran.
 * `attempt` is 0 when no handler ran for this result.
 */
export interface ResultOrigin {
  via: 'handler' | 'reconciled' | 'durability-error' | 'rejected' | 'cancelled' | 'invalid-call';
  attempt: number;
}

export const RESULT_ORIGINS: readonly ResultOrigin['via'][] = [
  'handler',
  'reconciled',
  'durability-error',
  'rejected',
  'cancelled',
  'invalid-call',
];

/** A message as the caller hands it to `append`; the store assigns `seq`. */
export interface NewMessage {
  /** Client-generated, unique within its session. Resolving an unknown append outcome relies on it. */
  id: string;
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** Marks special messages, e.g. `tool-durability-error`, `tool-error`. */
  kind?: string;
  /** On tool results written by `run()`: how the result was obtained. */
  origin?: ResultOrigin;
  /**
   * The message as the provider gave it, part by part (reasoning with its signature, files,
   * provider options, provider-executed calls), when that says more than `content` and
   * `toolCalls`; `content` is then the concatenation of the text parts.
   */
  parts?: MessagePart[];
  /** On assistant messages: what the model call that produced it used. */
  usage?: ModelCallUsage;
  createdAt: string;
}

export interface MessageRecord extends NewMessage {
  /** 1, 2, 3… contiguous within the session. */
  seq: number;
}

export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];
