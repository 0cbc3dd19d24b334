import type { JsonValue, MessageRecord, NewMessage, SessionRecord } from '../records.ts';

/** What a writer proves it holds: the lease holder and the epoch it was granted. */
export interface LeaseToken {
  holder: string;
  epoch: number;
}

/** Fields a session is created with when it does not exist yet. */
export interface SessionInit {
  agentName: string;
  ownerId: string | null;
  tenantId: string | null;
  state: JsonValue;
}

export interface AppendInput {
  /** The `headSeq` the writer last saw. The append commits only if the store still holds it. */
  expectedSeq: number;
  messages: NewMessage[];
  /**
   * The session write that lands with the messages. `state` replaces the stored state.
   * `init` is used only when `expectedSeq` is 0 and the session does not exist; owner and
   * tenant of an existing session are never changed by an append.
   */
  session?: { state?: JsonValue; init?: SessionInit };
  /**
   * The writer's lease. The append commits only if the stored lease has this holder and epoch.
   * `null` appends without a lease: allowed only while no unexpired lease is held.
   */
  lease: LeaseToken | null;
  /** Release the lease in the same atomic write (saves a round trip at the end of a run). */
  releaseLease?: boolean;
}

export interface LoadOptions {
  /** Only messages with `seq > afterSeq`. */
  afterSeq?: number;
}

export interface LoadResult {
  session: SessionRecord;
  messages: MessageRecord[];
}

export interface AcquireLeaseInput {
  holder: string;
  ttlMs: number;
  /**
   * Creates the session when absent. When the session exists, its `ownerId` and `tenantId`
   * must equal these or the call fails with `SessionAccessDeniedError` and changes nothing.
   */
  init: SessionInit;
}

export interface ListSessionsInput {
  ownerId?: string;
  tenantId?: string;
  agentName?: string;
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
}

export interface ListSessionsResult {
  /**
   * Ordered by session id, in Unicode code point order (the byte order of the ids' UTF-8; not
   * JavaScript's `<`, which orders UTF-16 code units): see `compareSessionIds` in
   * `@agentstore/core/store`.
   */
  sessions: SessionRecord[];
  nextCursor: string | null;
}

export interface DeleteIdleSessionsInput {
  /**
   * ISO-8601. A session is idle when its last append (`updatedAt`) is earlier than this and no
   * unexpired lease is held on it; idle sessions are deleted whole (session and every message).
   * `updatedAt` is stamped by the store's authority clock (the database server's), never the
   * writer's, so a writer whose clock runs behind cannot make a session look idle; a store with no
   * server clock (`maxClockSkewMs` set) counts a session idle only before `idleBefore` less that bound.
   */
  idleBefore: string;
  /** Upper bound on the index entries one call examines, so one call is one bounded batch. */
  limit: number;
  /** `nextCursor` of the previous call of the same sweep (same `idleBefore`). */
  cursor?: string | null;
}

export interface DeleteIdleSessionsResult {
  /** Ids of the sessions this call deleted (at most `limit`). */
  deleted: string[];
  /** Pass it back to continue the sweep; `null` when every idle candidate has been examined. */
  nextCursor: string | null;
}

export interface StoreLimits {
  /** Largest message accepted, measured by `messageByteLength`. */
  maxMessageBytes: number;
  /** At least 2: `run()` commits a rejection's decision and its result together. */
  maxMessagesPerAppend: number;
  /**
   * Largest sum of `messageByteLength` over one append's messages, for backends whose atomic
   * write has a byte budget (DynamoDB's 4 MB transaction). Absent: only `maxMessageBytes` and
   * `maxMessagesPerAppend` bound an append. `run()` splits its commits to fit all three.
   */
  maxAppendBytes?: number;
}

/**
 * The durable store behind `run()`. Every method is async; an adapter is a factory returning
 * a plain object. The contract is documented method by method below and in
 * docs/custom-store.md; `@agentstore/conformance` checks a store against it.
 */
export interface AgentStore {
  /** True when an acknowledged append survives the process and the machine. */
  readonly durable: boolean;
  /**
   * Optional: when `durable` is false because of how the backend is set up (not by design, as
   * for `memoryStore()`), what is wrong and what to change. `run()` refuses with it.
   */
  readonly durabilityProblem?: { store: string; detail: string; fix: string } | null;
  readonly limits: StoreLimits;
  /**
   * For a store that judges lease expiry by its clients' clocks (a backend without a server
   * clock, e.g. DynamoDB): a lease counts as expired only this long after its stored expiry, so it
   * must cover the largest difference between any two clients' clocks. Absent or 0 for stores that
   * judge expiry by one authority clock (the database server's, or the process's own).
   */
  readonly maxClockSkewMs?: number;
  load(sessionId: string, options?: LoadOptions): Promise<LoadResult | null>;
  /**
   * Atomic: all messages and the session write land together or not at all. Throws
   * `SeqConflictError` when the stored `headSeq` differs from `expectedSeq`, `LeaseLostError`
   * when the lease does not match, `PayloadTooLargeError` / `InvalidArgumentError` before any write.
   */
  append(sessionId: string, input: AppendInput): Promise<{ headSeq: number }>;
  /** Takes the lease when free, expired or already the holder's; else `SessionBusyError`. */
  acquireLease(
    sessionId: string,
    input: AcquireLeaseInput,
  ): Promise<{ epoch: number; session: SessionRecord }>;
  /** Extends a held lease; `LeaseLostError` when the holder or epoch no longer match. */
  renewLease(sessionId: string, input: LeaseToken & { ttlMs: number }): Promise<{ expiresAt: string }>;
  /** Frees the lease if this holder and epoch still hold it; `released: false` otherwise. */
  releaseLease(sessionId: string, input: LeaseToken): Promise<{ released: boolean }>;
  listSessions(input: ListSessionsInput): Promise<ListSessionsResult>;
  deleteSession(sessionId: string): Promise<{ deleted: boolean }>;
  /**
   * Retention: deletes sessions idle since before `idleBefore`, one bounded batch per call, in an
   * order driven by an index on activity. A session is removed whole, never its oldest messages
   * first; a session holding an unexpired lease is left alone. The check and the delete are one
   * atomic step per session, so an append racing the sweep either lands (and the session stays) or
   * finds the session gone. Call again with `nextCursor` until it is `null`.
   */
  deleteIdleSessions(input: DeleteIdleSessionsInput): Promise<DeleteIdleSessionsResult>;
  close(): Promise<void>;
}
