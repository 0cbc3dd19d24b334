import { AgentStoreError } from './base.ts';

/* Errors about the store and its sessions: conflicts, leases, limits, records, configuration. */

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

/**
 * Another holder has the session's lease. Retry after `retryAfterMs`: by then the lease has
 * lapsed if its holder crashed (a live holder renews it). Thrown by `run()` after it waited
 * `leaseWaitMs`, it says so (`waitedMs`) and how to wait instead.
 */
export class SessionBusyError extends AgentStoreError {
  readonly code = 'SESSION_BUSY' as const;
  readonly sessionId: string;
  readonly retryAfterMs: number;
  /** Set by `run()`: how long it waited for the lease (`leaseWaitMs`) before giving up; 0 when it did not. */
  readonly waitedMs?: number;
  constructor(
    facts: { sessionId: string; retryAfterMs: number; waitedMs?: number },
    options?: { cause?: unknown },
  ) {
    const retryAfterMs = Math.max(0, Math.ceil(facts.retryAfterMs));
    const waitedMs = facts.waitedMs === undefined ? undefined : Math.max(0, Math.round(facts.waitedMs));
    super(
      `Session ${JSON.stringify(facts.sessionId)} is being run by another worker; ` +
        (waitedMs === undefined
          ? `retry after ${retryAfterMs} ms`
          : `${waitedMs > 0 ? `run() waited ${waitedMs} ms for its lease; ` : ''}` +
            `its lease ends in ${retryAfterMs} ms unless renewed. If that worker crashed, ` +
            `run again with leaseWaitMs: ${retryAfterMs + 1_000} (or more) to wait it out`),
      options,
    );
    this.sessionId = facts.sessionId;
    this.retryAfterMs = retryAfterMs;
    if (waitedMs !== undefined) this.waitedMs = waitedMs;
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
  /** For a message with parts: its largest part, e.g. `parts[1] (file application/pdf, about 5242880 bytes)`. */
  readonly part?: string;
  constructor(facts: {
    sessionId: string;
    subject: 'message' | 'append';
    messageId: string | null;
    size: number;
    limit: number;
    unit?: 'messages' | 'bytes';
    part?: string;
  }) {
    const unit = facts.unit ?? (facts.subject === 'message' ? 'bytes' : 'messages');
    super(
      facts.subject === 'message'
        ? `Session ${JSON.stringify(facts.sessionId)}: message ${JSON.stringify(facts.messageId)} is ` +
            `${facts.size} bytes, over this store's limit of ${facts.limit}` +
            `${facts.part ? ` (its largest part: ${facts.part}; send large media by URL)` : ''}; nothing was written`
        : `Session ${JSON.stringify(facts.sessionId)}: ${facts.size} ${unit === 'bytes' ? 'bytes of messages' : 'messages'} ` +
            `in one append, over this store's limit of ${facts.limit}; nothing was written`,
    );
    this.unit = unit;
    if (facts.part !== undefined) this.part = facts.part;
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
