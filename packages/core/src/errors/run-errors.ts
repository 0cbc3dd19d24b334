import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Usage } from '../llm.ts';
import { AgentStoreError } from './base.ts';

/* Errors about a run: its arguments, the model's reply, tools, approvals, appends of unknown outcome. */

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
