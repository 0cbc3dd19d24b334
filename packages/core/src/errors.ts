import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Usage } from './llm.ts';

/** Base of every error agentstore throws on purpose. `code` is a literal per class. */
export abstract class AgentStoreError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The stored `headSeq` was not the `expectedSeq` the writer saw: someone else appended first. */
export class SeqConflictError extends AgentStoreError {
  readonly code = 'SEQ_CONFLICT' as const;
  readonly sessionId: string;
  readonly expectedSeq: number;
  /** The stored head seq, when the store could tell it without another read; else null. */
  readonly actualSeq: number | null;
  constructor(facts: { sessionId: string; expectedSeq: number; actualSeq: number | null }) {
    super(
      `Session ${JSON.stringify(facts.sessionId)}: expected head seq ${facts.expectedSeq}, ` +
        `store has ${facts.actualSeq ?? 'a different one'}; nothing was written`,
    );
    this.sessionId = facts.sessionId;
    this.expectedSeq = facts.expectedSeq;
    this.actualSeq = facts.actualSeq;
  }
}

/** The writer's lease (holder + epoch) no longer matches the stored one: it was fenced off. */
export class LeaseLostError extends AgentStoreError {
  readonly code = 'LEASE_LOST' as const;
  readonly sessionId: string;
  readonly holder: string | null;
  readonly epoch: number | null;
  constructor(
    facts: { sessionId: string; holder: string | null; epoch: number | null },
    options?: { cause?: unknown },
  ) {
    super(
      `Session ${JSON.stringify(facts.sessionId)}: lease ${facts.holder ?? '(none)'}@${facts.epoch ?? '-'} ` +
        'is no longer held; nothing was written',
      options,
    );
    this.sessionId = facts.sessionId;
    this.holder = facts.holder;
    this.epoch = facts.epoch;
  }
}

/** Another holder has the session's lease. Retry after `retryAfterMs`. */
export class SessionBusyError extends AgentStoreError {
  readonly code = 'SESSION_BUSY' as const;
  readonly sessionId: string;
  readonly retryAfterMs: number;
  constructor(facts: { sessionId: string; retryAfterMs: number }) {
    super(
      `Session ${JSON.stringify(facts.sessionId)} is being run by another worker; ` +
        `retry after ${facts.retryAfterMs} ms`,
    );
    this.sessionId = facts.sessionId;
    this.retryAfterMs = Math.max(0, Math.ceil(facts.retryAfterMs));
  }
}

const notFoundMessage = (sessionId: string) => `Session ${JSON.stringify(sessionId)} not found`;

export class SessionNotFoundError extends AgentStoreError {
  readonly code = 'SESSION_NOT_FOUND' as const;
  readonly sessionId: string;
  constructor(facts: { sessionId: string }) {
    super(notFoundMessage(facts.sessionId));
    this.sessionId = facts.sessionId;
  }
}

/**
 * The session belongs to another owner or tenant. The message is the not-found one on purpose,
 * so a caller cannot probe which session ids exist.
 */
export class SessionAccessDeniedError extends AgentStoreError {
  readonly code = 'SESSION_ACCESS_DENIED' as const;
  readonly sessionId: string;
  constructor(facts: { sessionId: string }) {
    super(notFoundMessage(facts.sessionId));
    this.sessionId = facts.sessionId;
  }
}

export class MemoryStoreNotDurableError extends AgentStoreError {
  readonly code = 'MEMORY_STORE_NOT_DURABLE' as const;
  readonly sessionId: string;
  constructor(facts: { sessionId: string }) {
    super(
      `run() was given sessionId ${JSON.stringify(facts.sessionId)} with a store that is not durable; ` +
        'use a durable adapter (e.g. @agentstore/sqlite) or drop the sessionId for a stateless run',
    );
    this.sessionId = facts.sessionId;
  }
}

export class PayloadTooLargeError extends AgentStoreError {
  readonly code = 'PAYLOAD_TOO_LARGE' as const;
  readonly sessionId: string;
  /** What is over its limit: one message, or the number of messages in one append. */
  readonly subject: 'message' | 'append';
  readonly messageId: string | null;
  readonly size: number;
  readonly limit: number;
  /** What `size` and `limit` count: bytes for a message; messages, or bytes (`maxAppendBytes`), for an append. */
  readonly unit: 'messages' | 'bytes';
  constructor(facts: {
    sessionId: string;
    subject: 'message' | 'append';
    messageId: string | null;
    size: number;
    limit: number;
    unit?: 'messages' | 'bytes';
  }) {
    const unit = facts.unit ?? (facts.subject === 'message' ? 'bytes' : 'messages');
    super(
      facts.subject === 'message'
        ? `Session ${JSON.stringify(facts.sessionId)}: message ${JSON.stringify(facts.messageId)} is ` +
            `${facts.size} bytes, over this store's limit of ${facts.limit}; nothing was written`
        : `Session ${JSON.stringify(facts.sessionId)}: ${facts.size} ${unit === 'bytes' ? 'bytes of messages' : 'messages'} ` +
            `in one append, over this store's limit of ${facts.limit}; nothing was written`,
    );
    this.unit = unit;
    this.sessionId = facts.sessionId;
    this.subject = facts.subject;
    this.messageId = facts.messageId;
    this.size = facts.size;
    this.limit = facts.limit;
  }
}

/** A stored row could not be decoded. Never skipped silently. */
export class CorruptRecordError extends AgentStoreError {
  readonly code = 'CORRUPT_RECORD' as const;
  readonly sessionId: string;
  /** The message seq, or null when the session record itself is corrupt. */
  readonly seq: number | null;
  constructor(
    facts: { sessionId: string; seq: number | null; reason: string },
    options?: { cause?: unknown },
  ) {
    super(
      `Session ${JSON.stringify(facts.sessionId)}: stored ${facts.seq === null ? 'session record' : `message seq ${facts.seq}`} ` +
        `cannot be decoded (${facts.reason})`,
      options,
    );
    this.sessionId = facts.sessionId;
    this.seq = facts.seq;
  }
}

/**
 * A tool call was orphaned by a crash (it has no result), the tool is neither `safeToRetry` nor has `reconcile`,
 * so nobody knows whether its effect happened. Persisted as the call's result for the model.
 */
export class ToolDurabilityError extends AgentStoreError {
  readonly code = 'TOOL_DURABILITY' as const;
  readonly sessionId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  constructor(facts: { sessionId: string; toolCallId: string; toolName: string }) {
    super(
      `Tool ${JSON.stringify(facts.toolName)} (call ${facts.toolCallId}) was orphaned by a crash and ` +
        'is not safe to retry; it may or may not have taken effect',
    );
    this.sessionId = facts.sessionId;
    this.toolCallId = facts.toolCallId;
    this.toolName = facts.toolName;
  }
}

/**
 * An append failed in a way that leaves its outcome unknown, and a re-read could not settle it; or
 * it went unanswered for the lease's safe window (TTL − margin), so the run gave its lease up
 * rather than wait forever (`rereadError` is then null, and `cause` says so).
 */
export class AppendOutcomeUnknownError extends AgentStoreError {
  readonly code = 'APPEND_OUTCOME_UNKNOWN' as const;
  readonly sessionId: string;
  readonly expectedSeq: number;
  /** Why the re-read could not settle it (the append's own failure is `cause`); null when none was tried. */
  readonly rereadError: unknown;
  constructor(
    facts: { sessionId: string; expectedSeq: number; rereadError?: unknown },
    options?: { cause?: unknown },
  ) {
    const why =
      facts.rereadError === undefined
        ? "no answer came within the lease's safe window, so the lease was given up"
        : 're-reading could not tell';
    super(
      `Session ${JSON.stringify(facts.sessionId)}: the append after seq ${facts.expectedSeq} may or may not ` +
        `have committed and ${why}; the next run resolves it`,
      options,
    );
    this.sessionId = facts.sessionId;
    this.expectedSeq = facts.expectedSeq;
    this.rereadError = facts.rereadError ?? null;
  }
}

/** An argument is malformed. Thrown before anything is written. */
export class InvalidArgumentError extends AgentStoreError {
  readonly code = 'INVALID_ARGUMENT' as const;
  /** Dotted path of the offending argument, e.g. `messages[2].role`. */
  readonly argument: string;
  constructor(facts: { argument: string; reason: string }) {
    super(`Invalid ${facts.argument}: ${facts.reason}`);
    this.argument = facts.argument;
  }
}

/**
 * The model adapter's reply breaks the `LlmResponse` contract in a way the loop cannot record as a
 * tool result (text that is not a string, tool calls that are not an array of objects with a
 * string name, or a reply too big for one stored message even with every call's input dropped).
 * Thrown after the user's message of the step is committed, so the session resumes by asking the
 * model again; the paid reply itself is `reply`, as the adapter returned it. The session state's
 * token count includes the refused reply only when something was committed with it (the user's
 * message); on a resume with no new message nothing is, and `usage` is the only record of it.
 */
export class InvalidModelReplyError extends AgentStoreError {
  readonly code = 'INVALID_MODEL_REPLY' as const;
  /** Where in the reply, e.g. `text` or `toolCalls[1].name`. */
  readonly field: string;
  readonly reason: string;
  /** The reply as the adapter returned it. */
  readonly reply: unknown;
  /** Tokens the run's model calls used, this reply included; null when not known. */
  readonly usage: Usage | null;
  constructor(facts: { field: string; reason: string; reply: unknown; usage?: Usage }) {
    super(`The model's reply cannot be stored: ${facts.field} ${facts.reason}; nothing of it was written`);
    this.field = facts.field;
    this.reason = facts.reason;
    this.reply = facts.reply;
    this.usage = facts.usage ? { ...facts.usage } : null;
  }
}

/** The session waits on human decisions for these calls; pass `approvals` to `run()`. */
export class ApprovalRequiredError extends AgentStoreError {
  readonly code = 'APPROVAL_REQUIRED' as const;
  readonly sessionId: string;
  readonly toolCallIds: string[];
  constructor(facts: { sessionId: string; toolCallIds: string[] }) {
    super(
      `Session ${JSON.stringify(facts.sessionId)} is waiting for approval of tool calls ` +
        `${facts.toolCallIds.join(', ')}; pass a decision for each in run({ approvals })`,
    );
    this.sessionId = facts.sessionId;
    this.toolCallIds = facts.toolCallIds;
  }
}

/** A decision was given for a call that was already decided, or that awaits no approval. */
export class InvalidApprovalError extends AgentStoreError {
  readonly code = 'INVALID_APPROVAL' as const;
  readonly sessionId: string;
  readonly toolCallId: string;
  readonly reason: 'already-decided' | 'unknown-call';
  constructor(facts: { sessionId: string; toolCallId: string; reason: 'already-decided' | 'unknown-call' }) {
    super(
      `Session ${JSON.stringify(facts.sessionId)}: tool call ${JSON.stringify(facts.toolCallId)} ` +
        (facts.reason === 'already-decided' ? 'was already decided' : 'is not awaiting approval'),
    );
    this.sessionId = facts.sessionId;
    this.toolCallId = facts.toolCallId;
    this.reason = facts.reason;
  }
}

/** A tool's input or output failed its Standard Schema; `issues` are the schema's own. */
export class SchemaValidationError extends AgentStoreError {
  readonly code = 'SCHEMA_VALIDATION' as const;
  readonly issues: ReadonlyArray<StandardSchemaV1.Issue>;
  constructor(what: string, issues: ReadonlyArray<StandardSchemaV1.Issue>) {
    const details = issues
      .map((issue) => {
        const path = issue.path?.map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.');
        return path ? `${path}: ${issue.message}` : issue.message;
      })
      .join('; ');
    super(`${what} is invalid: ${details}`);
    this.issues = issues;
  }
}

/**
 * The store's schema (tables, index, table) does not exist yet. Server backends never create it
 * behind your back (a deploy role may lack the right, and DDL belongs at deploy time): `fix` is
 * the exact call that creates it. SQLite creates its tables when opened; Redis needs none.
 */
export class SchemaMissingError extends AgentStoreError {
  readonly code = 'SCHEMA_MISSING' as const;
  /** The adapter package, e.g. `@agentstore/postgres`. */
  readonly store: string;
  /** What is missing, as the backend named it. */
  readonly missing: string;
  /** The call that creates it, e.g. `await store.migrate()`. */
  readonly fix: string;
  constructor(facts: { store: string; missing: string; fix: string }, options?: { cause?: unknown }) {
    super(
      `${facts.store}: ${facts.missing} does not exist: the schema is not set up. Fix: ${facts.fix}`,
      options,
    );
    this.store = facts.store;
    this.missing = facts.missing;
    this.fix = facts.fix;
  }
}

/**
 * The store, or the server behind it, is set up in a way that breaks it or one of its guarantees
 * (a transaction pooler that drops prepared statements, a table with another key layout, TTL
 * off while `ttlSeconds` is set, a Redis server that does not persist). `fix` says what to change.
 */
export class StoreConfigurationError extends AgentStoreError {
  readonly code = 'STORE_CONFIGURATION' as const;
  readonly store: string;
  /** A stable name for the problem, e.g. `prepared-statements-behind-pooler`. */
  readonly problem: string;
  readonly fix: string;
  constructor(
    facts: { store: string; problem: string; detail: string; fix: string },
    options?: { cause?: unknown },
  ) {
    super(`${facts.store}: ${facts.detail} Fix: ${facts.fix}`, options);
    this.store = facts.store;
    this.problem = facts.problem;
    this.fix = facts.fix;
  }
}

/**
 * The backend answered in a way the adapter does not understand (a script's unknown reply tag, a
 * row of the wrong shape, a missing row right after a write). For a write, its outcome is unknown:
 * the run settles it by re-reading, as after a dropped connection.
 */
export class UnexpectedReplyError extends AgentStoreError {
  readonly code = 'UNEXPECTED_REPLY' as const;
  /** The adapter that got the reply, e.g. `@agentstore/redis`. */
  readonly store: string;
  /** The store operation, e.g. `append`. */
  readonly operation: string;
  /** The reply, cut short for the message. */
  readonly reply: string;
  constructor(facts: { store: string; operation: string; reply: unknown; sessionId?: string }) {
    let reply: string;
    try {
      reply =
        typeof facts.reply === 'string' ? facts.reply : (JSON.stringify(facts.reply) ?? String(facts.reply));
    } catch {
      reply = String(facts.reply);
    }
    reply = reply.length > 200 ? `${reply.slice(0, 200)}…` : reply;
    super(
      `${facts.store}: unexpected reply to ${facts.operation}${facts.sessionId === undefined ? '' : ` of session ${JSON.stringify(facts.sessionId)}`}: ${reply}`,
    );
    this.store = facts.store;
    this.operation = facts.operation;
    this.reply = reply;
  }
}

/** The tables were migrated by a newer package; this one refuses to guess their layout. */
export class SchemaVersionError extends AgentStoreError {
  readonly code = 'SCHEMA_VERSION_UNSUPPORTED' as const;
  readonly found: number;
  readonly supported: number;
  constructor(found: number, supported: number) {
    super(
      `The tables were migrated to agentstore schema version ${found}, newer than the ${supported} ` +
        'this package understands; upgrade the package',
    );
    this.found = found;
    this.supported = supported;
  }
}

/** Every error class agentstore throws, keyed by its literal `code`. */
export interface AgentStoreErrorsByCode {
  SEQ_CONFLICT: SeqConflictError;
  LEASE_LOST: LeaseLostError;
  SESSION_BUSY: SessionBusyError;
  SESSION_NOT_FOUND: SessionNotFoundError;
  SESSION_ACCESS_DENIED: SessionAccessDeniedError;
  MEMORY_STORE_NOT_DURABLE: MemoryStoreNotDurableError;
  PAYLOAD_TOO_LARGE: PayloadTooLargeError;
  CORRUPT_RECORD: CorruptRecordError;
  TOOL_DURABILITY: ToolDurabilityError;
  APPEND_OUTCOME_UNKNOWN: AppendOutcomeUnknownError;
  INVALID_ARGUMENT: InvalidArgumentError;
  INVALID_MODEL_REPLY: InvalidModelReplyError;
  APPROVAL_REQUIRED: ApprovalRequiredError;
  INVALID_APPROVAL: InvalidApprovalError;
  SCHEMA_VALIDATION: SchemaValidationError;
  SCHEMA_MISSING: SchemaMissingError;
  STORE_CONFIGURATION: StoreConfigurationError;
  UNEXPECTED_REPLY: UnexpectedReplyError;
  SCHEMA_VERSION_UNSUPPORTED: SchemaVersionError;
}

export type AgentStoreErrorCode = keyof AgentStoreErrorsByCode;

/**
 * Recognises an agentstore error by its `code`, never by `instanceof`: an app with two installed
 * copies of `@agentstore/core` (an adapter built against another version) gets the same answer.
 * With no codes, any agentstore error matches; with several, any one of them.
 */
export function isAgentStoreError<C extends AgentStoreErrorCode>(
  error: unknown,
  ...codes: C[]
): error is AgentStoreErrorsByCode[C] {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !(error instanceof Error || 'message' in error)) return false;
  if (codes.length === 0) return KNOWN_CODES.has(code);
  return (codes as string[]).includes(code);
}

const KNOWN_CODES: ReadonlySet<string> = new Set<AgentStoreErrorCode>([
  'SEQ_CONFLICT',
  'LEASE_LOST',
  'SESSION_BUSY',
  'SESSION_NOT_FOUND',
  'SESSION_ACCESS_DENIED',
  'MEMORY_STORE_NOT_DURABLE',
  'PAYLOAD_TOO_LARGE',
  'CORRUPT_RECORD',
  'TOOL_DURABILITY',
  'APPEND_OUTCOME_UNKNOWN',
  'INVALID_ARGUMENT',
  'INVALID_MODEL_REPLY',
  'APPROVAL_REQUIRED',
  'INVALID_APPROVAL',
  'SCHEMA_VALIDATION',
  'SCHEMA_MISSING',
  'STORE_CONFIGURATION',
  'UNEXPECTED_REPLY',
  'SCHEMA_VERSION_UNSUPPORTED',
]);
