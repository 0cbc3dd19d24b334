import {
  type AgentStore,
  CorruptRecordError,
  InvalidArgumentError,
  type Lease,
  LeaseLostError,
  type MessageRecord,
  PayloadTooLargeError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionRecord,
  type StoreLimits,
} from '@agentstore/core';
import {
  appendLeaseMatches,
  canAcquireLease,
  compareSessionIds,
  decodeRetentionCursor,
  encodeRetentionCursor,
  expiryIso,
  isLeaseLive,
  newIncarnationId,
  ownerMatches,
  processClockMs,
  retryAfterMs,
  snapshotInput,
  validateAcquireLeaseInput,
  validateAppendInput,
  validateListSessionsInput,
  validateLoadOptions,
  validateReleaseLeaseInput,
  validateRenewLeaseInput,
  validateRetentionInput,
  validateSessionId,
} from '@agentstore/core/store';
import type { StoreCapabilities } from '../../src/index.ts';

/**
 * Deliberate bugs, one per flag, each a mistake real stores make. The kit must catch every one.
 */
export interface Flaws {
  /** Writes messages one round trip at a time and checks sizes as it goes: a failure leaves the first ones behind. */
  nonAtomic?: boolean;
  /** Inserts the rows before the guarded head update, outside a transaction: a conflict leaves rows past the head. `load` (which reads up to the head) looks clean; the table is not. */
  leavesOrphanRows?: boolean;
  /** Appends after whatever head it finds, ignoring `expectedSeq`. */
  noSeqCheck?: boolean;
  /** Compares the lease holder but not its epoch. */
  ignoresEpoch?: boolean;
  /** Loses the last message of every multi-message append (an off-by-one in a batch insert). */
  dropsLast?: boolean;
  /** Assigns seqs in reverse order within an append. */
  reorders?: boolean;
  /** Skips rows it cannot decode instead of reporting them. */
  skipsCorrupt?: boolean;
  /** Returns every message whatever `afterSeq` says. */
  ignoresAfterSeq?: boolean;
  /** Forgets the tenant filter in `listSessions`. */
  ignoresTenantFilter?: boolean;
  /** Lists sessions in JavaScript's `<` order (UTF-16 code units) instead of code point order. */
  ordersByUtf16?: boolean;
  /** Keys sessions by a "sanitized" id, so ids differing only in punctuation or case collide. */
  sanitizesIds?: boolean;
  /** Makes five round trips per append where one would do. */
  chatty?: boolean;
  /** Judges and writes lease expiry by the calling process's wall clock (`Date.now()`), not the store's. */
  trustsClientClock?: boolean;
  /** Checks the seq before the lease, so a fenced writer hears "seq conflict" once its successor appended. */
  seqBeforeLease?: boolean;
  /** Lets a lease lapse at half its TTL (a seconds/ms or clock-unit slip): takers arrive before the holder stops. */
  shortensLease?: boolean;
  /** Retention that deletes idle sessions even while they hold a live lease. */
  retentionIgnoresLease?: boolean;
  /** Retention that deletes a session's messages but leaves its row (a half-deleted session). */
  retentionLeavesSession?: boolean;
}

interface SessionRow {
  id: string;
  agentName: string;
  ownerId: string | null;
  tenantId: string | null;
  /** JSON text, as a database column would hold it. */
  state: string;
  headSeq: number;
  leaseHolder: string | null;
  leaseEpoch: number;
  leaseExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  incarnationId: string;
}

/** Burns `us` microseconds, standing in for a network round trip that costs the same on both sides of the perf gate. */
function spin(us: number) {
  const until = performance.now() + us / 1000;
  while (performance.now() < until) {
    // busy: a round trip's cost, not a timer's jitter
  }
}

const DEFAULT_LIMITS: StoreLimits = { maxMessageBytes: 262_144, maxMessagesPerAppend: 100 };

/**
 * A store over two in-process "tables" (session rows and message rows as JSON text), with a raw
 * reader, a corrupter and a floor that read and write those tables directly. Correct unless
 * given flaws. Every call costs one simulated round trip.
 */
export function tableStore(
  options: { flaws?: Flaws; roundTripUs?: number; limits?: Partial<StoreLimits> } = {},
): {
  store: AgentStore;
  capabilities: Required<StoreCapabilities>;
  /** Round trips so far by the store or by the floor (as `OpenTestTarget.roundTrips` counts them). */
  roundTrips(subject: object): number;
} {
  const flaws = options.flaws ?? {};
  const limits: StoreLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const sessions = new Map<string, SessionRow>();
  const messages = new Map<string, Map<number, string>>();
  const key = (id: string) => (flaws.sanitizesIds ? id.toLowerCase().replace(/[^a-z0-9-]/g, '_') : id);
  // The store's own clock, unless the flaw makes it trust whatever clock its caller has.
  const clock = () => (flaws.trustsClientClock ? Date.now() : processClockMs());
  const expiry = (now: number, ttlMs: number) =>
    expiryIso(now, flaws.shortensLease ? Math.floor(ttlMs / 2) : ttlMs);
  const trips = { store: 0, floor: 0 };
  const roundTrip = async (by: keyof typeof trips = 'store') => {
    trips[by] += 1;
    await new Promise((resolve) => setImmediate(resolve));
    if (options.roundTripUs) spin(options.roundTripUs);
  };

  const leaseOf = (row: SessionRow): Lease | null =>
    row.leaseHolder === null
      ? null
      : { holder: row.leaseHolder, epoch: row.leaseEpoch, expiresAt: row.leaseExpiresAt! };

  const toRecord = (row: SessionRow): SessionRecord => ({
    id: row.id,
    agentName: row.agentName,
    ownerId: row.ownerId,
    tenantId: row.tenantId,
    state: JSON.parse(row.state),
    headSeq: row.headSeq,
    lease: leaseOf(row),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    incarnationId: row.incarnationId,
  });

  const rowsOf = (id: string) => {
    let rows = messages.get(key(id));
    if (!rows) {
      rows = new Map();
      messages.set(key(id), rows);
    }
    return rows;
  };

  const store: AgentStore = {
    durable: true,
    limits,

    async load(sessionId, options = {}) {
      validateSessionId(sessionId);
      validateLoadOptions(options);
      const afterSeq = options.afterSeq ?? 0;
      await roundTrip();
      const row = sessions.get(key(sessionId));
      if (!row) return null;
      const from = flaws.ignoresAfterSeq ? 0 : afterSeq;
      const rows = messages.get(key(sessionId)) ?? new Map<number, string>();
      const loaded: MessageRecord[] = [];
      for (let seq = from + 1; seq <= row.headSeq; seq++) {
        const text = rows.get(seq);
        try {
          loaded.push(JSON.parse(text ?? '') as MessageRecord);
        } catch (error) {
          if (flaws.skipsCorrupt) continue;
          throw new CorruptRecordError({ sessionId, seq, reason: 'invalid JSON' }, { cause: error });
        }
      }
      return { session: toRecord(row), messages: loaded };
    },

    async append(sessionId, given) {
      // One read of the caller's objects, validated and stored (the kit's shifting-input check).
      const input = snapshotInput(given);
      if (flaws.nonAtomic) {
        // Validates everything but sizes up front; sizes are "enforced by the backend" row by row.
        validateAppendInput(sessionId, input, { ...limits, maxMessageBytes: Number.MAX_SAFE_INTEGER });
      } else {
        validateAppendInput(sessionId, input, limits);
      }
      await roundTrip();
      if (flaws.chatty) for (let i = 0; i < 4; i++) await roundTrip();
      const now = clock();
      const iso = new Date(now).toISOString();
      const existing = sessions.get(key(sessionId));
      const head = existing?.headSeq ?? 0;
      if (flaws.leavesOrphanRows) {
        input.messages.forEach((message, i) => {
          rowsOf(sessionId).set(head + i + 1, JSON.stringify({ ...message, seq: head + i + 1 }));
        });
      }
      const seqOk = flaws.noSeqCheck || head === input.expectedSeq;
      if (!seqOk && flaws.seqBeforeLease) {
        throw new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: head });
      }
      const lease = existing ? leaseOf(existing) : null;
      const leaseOk = flaws.ignoresEpoch
        ? input.lease === null
          ? appendLeaseMatches(lease, null, now)
          : lease?.holder === input.lease.holder
        : appendLeaseMatches(lease, input.lease, now);
      if (!leaseOk) {
        throw new LeaseLostError({
          sessionId,
          holder: input.lease?.holder ?? null,
          epoch: input.lease?.epoch ?? null,
        });
      }
      if (!seqOk) throw new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: head });
      const init = input.session?.init;
      const row: SessionRow = existing ?? {
        id: sessionId,
        agentName: init?.agentName ?? '',
        ownerId: init?.ownerId ?? null,
        tenantId: init?.tenantId ?? null,
        state: JSON.stringify(init?.state ?? null),
        headSeq: 0,
        leaseHolder: null,
        leaseEpoch: 0,
        leaseExpiresAt: null,
        createdAt: iso,
        updatedAt: iso,
        incarnationId: newIncarnationId(),
      };
      let batch = input.messages;
      if (flaws.dropsLast && batch.length > 1) batch = batch.slice(0, -1);
      if (flaws.reorders) batch = [...batch].reverse();
      const rows = rowsOf(sessionId);
      if (flaws.nonAtomic) {
        if (!existing) sessions.set(key(sessionId), row);
        for (const [i, message] of batch.entries()) {
          await roundTrip();
          const text = JSON.stringify({ ...message, seq: head + i + 1 });
          const size = Buffer.byteLength(JSON.stringify(message));
          if (size > limits.maxMessageBytes) {
            throw new PayloadTooLargeError({
              sessionId,
              subject: 'message',
              messageId: message.id,
              size,
              limit: limits.maxMessageBytes,
            });
          }
          rows.set(head + i + 1, text);
          row.headSeq = head + i + 1;
        }
      } else {
        batch.forEach((message, i) => {
          rows.set(head + i + 1, JSON.stringify({ ...message, seq: head + i + 1 }));
        });
        row.headSeq = head + batch.length;
      }
      row.updatedAt = iso;
      if (input.session?.state !== undefined) row.state = JSON.stringify(input.session.state);
      if (input.releaseLease) {
        row.leaseHolder = null;
        row.leaseExpiresAt = null;
      }
      sessions.set(key(sessionId), row);
      return { headSeq: row.headSeq };
    },

    async acquireLease(sessionId, input) {
      // The whole argument first: destructuring a null would be a raw TypeError.
      validateAcquireLeaseInput(sessionId, input);
      const { holder, ttlMs, init } = input;
      await roundTrip();
      const now = clock();
      const iso = new Date(now).toISOString();
      const existing = sessions.get(key(sessionId));
      if (existing && !ownerMatches(existing, init)) throw new SessionAccessDeniedError({ sessionId });
      const lease = existing ? leaseOf(existing) : null;
      if (existing && lease && !canAcquireLease(lease, holder, now)) {
        throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(lease, now) });
      }
      const row: SessionRow = existing ?? {
        id: sessionId,
        agentName: init.agentName,
        ownerId: init.ownerId,
        tenantId: init.tenantId,
        state: JSON.stringify(init.state),
        headSeq: 0,
        leaseHolder: null,
        leaseEpoch: 0,
        leaseExpiresAt: null,
        createdAt: iso,
        updatedAt: iso,
        incarnationId: newIncarnationId(),
      };
      row.leaseEpoch += 1;
      row.leaseHolder = holder;
      row.leaseExpiresAt = expiry(now, ttlMs);
      sessions.set(key(sessionId), row);
      return { epoch: row.leaseEpoch, session: toRecord(row) };
    },

    async renewLease(sessionId, input) {
      validateRenewLeaseInput(sessionId, input);
      const { holder, epoch, ttlMs } = input;
      await roundTrip();
      const row = sessions.get(key(sessionId));
      if (!row || row.leaseHolder !== holder || row.leaseEpoch !== epoch) {
        throw new LeaseLostError({ sessionId, holder, epoch });
      }
      row.leaseExpiresAt = expiry(clock(), ttlMs);
      return { expiresAt: row.leaseExpiresAt };
    },

    async releaseLease(sessionId, input) {
      validateReleaseLeaseInput(sessionId, input);
      const { holder, epoch } = input;
      await roundTrip();
      const row = sessions.get(key(sessionId));
      if (!row || row.leaseHolder !== holder || row.leaseEpoch !== epoch) return { released: false };
      row.leaseHolder = null;
      row.leaseExpiresAt = null;
      return { released: true };
    },

    async listSessions(input) {
      validateListSessionsInput(input);
      const { ownerId, tenantId, agentName, limit, cursor } = input;
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new InvalidArgumentError({ argument: 'limit', reason: 'must be a positive integer' });
      }
      await roundTrip();
      const order = flaws.ordersByUtf16
        ? (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
        : compareSessionIds;
      const matching = [...sessions.values()]
        .filter(
          (row) =>
            (ownerId === undefined || row.ownerId === ownerId) &&
            (flaws.ignoresTenantFilter || tenantId === undefined || row.tenantId === tenantId) &&
            (agentName === undefined || row.agentName === agentName) &&
            (cursor == null || order(row.id, cursor) > 0),
        )
        .sort((a, b) => order(a.id, b.id));
      const page = matching.slice(0, limit);
      return { sessions: page.map(toRecord), nextCursor: matching.length > limit ? page.at(-1)!.id : null };
    },

    async deleteSession(sessionId) {
      validateSessionId(sessionId);
      await roundTrip();
      messages.delete(key(sessionId));
      return { deleted: sessions.delete(key(sessionId)) };
    },

    async deleteIdleSessions(input) {
      const { idleBefore, limit, cursor } = validateRetentionInput(input);
      await roundTrip();
      const after = cursor === null ? null : decodeRetentionCursor<string>(cursor, 'string');
      const order = (a: SessionRow, b: SessionRow) =>
        a.updatedAt < b.updatedAt || (a.updatedAt === b.updatedAt && a.id < b.id) ? -1 : 1;
      const candidates = [...sessions.values()]
        .filter(
          (row) =>
            row.updatedAt < idleBefore &&
            (after === null || row.updatedAt > after[0] || (row.updatedAt === after[0] && row.id > after[1])),
        )
        .sort(order)
        .slice(0, limit);
      const deleted: string[] = [];
      for (const row of candidates) {
        if (!flaws.retentionIgnoresLease && isLeaseLive(leaseOf(row), clock())) continue;
        messages.delete(key(row.id));
        if (!flaws.retentionLeavesSession) sessions.delete(key(row.id));
        deleted.push(row.id);
      }
      const last = candidates[candidates.length - 1];
      return {
        deleted,
        nextCursor:
          candidates.length === limit && last ? encodeRetentionCursor(last.updatedAt, last.id) : null,
      };
    },

    async close() {},
  };

  const capabilities: Required<StoreCapabilities> = {
    raw: {
      async session(sessionId) {
        const row = sessions.get(key(sessionId));
        if (!row) return null;
        const { id, headSeq, ownerId, tenantId, leaseHolder, leaseEpoch } = row;
        return { id, headSeq, ownerId, tenantId, leaseHolder, leaseEpoch };
      },
      async messages(sessionId) {
        const rows = [...(messages.get(key(sessionId)) ?? new Map<number, string>()).entries()].sort(
          ([a], [b]) => a - b,
        );
        return rows.map(([seq, text]) => {
          try {
            const { id, role, content } = JSON.parse(text) as MessageRecord;
            return { seq, id, role, content };
          } catch {
            return { seq, id: '', role: '', content: text };
          }
        });
      },
    },
    async corrupt(sessionId, seq) {
      rowsOf(sessionId).set(seq, '{"id": "half a row');
    },
    floor: {
      async append(sessionId, expectedSeq, records) {
        await roundTrip('floor');
        const row = sessions.get(key(sessionId));
        if (!row || row.headSeq !== expectedSeq)
          throw new Error(`floor: head of ${sessionId} is not ${expectedSeq}`);
        const rows = rowsOf(sessionId);
        for (const record of records) rows.set(record.seq, JSON.stringify(record));
        row.headSeq = expectedSeq + records.length;
        row.updatedAt = new Date().toISOString();
      },
    },
  };
  const roundTrips = (subject: object) => {
    if (subject === store) return trips.store;
    if (subject === capabilities.floor) return trips.floor;
    throw new Error('roundTrips: not this table store or its floor');
  };
  return { store, capabilities, roundTrips };
}
