import {
  InvalidArgumentError,
  LeaseLostError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
} from './errors.ts';
import type { MessageRecord, SessionRecord } from './records.ts';
import type { AgentStore, StoreLimits } from './store/contract.ts';
import { defineStore } from './store/define-store.ts';
import { newIncarnationId } from './store/incarnation.ts';
import {
  appendLeaseMatches,
  canAcquireLease,
  expiryIso,
  isLeaseLive,
  ownerMatches,
  processClockMs,
  retryAfterMs,
} from './store/lease-rules.ts';
import { decodeStoredMessage } from './store/record-codec.ts';
import { decodeRetentionCursor, encodeRetentionCursor } from './store/retention.ts';
import { compareSessionIds } from './store/session-id-order.ts';

interface StoredSession {
  session: SessionRecord;
  /** Survives release so the next grant's epoch is still higher than every earlier one. */
  leaseEpoch: number;
  /** JSON text, as a real store would hold it; decoded on every load. */
  messages: string[];
}

export interface MemoryStoreOptions {
  limits?: Partial<StoreLimits>;
}

const DEFAULT_LIMITS: StoreLimits = { maxMessageBytes: 4 * 1024 * 1024, maxMessagesPerAppend: 1000 };

// A JSON round trip, as every real store does it: no aliasing of the caller's objects, and what
// comes back is exactly what a real store would return (validated plain JSON only gets here).
const clone = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

/** The in-process store behind `memoryStore()` and the test-only durable store. */
export function createInMemoryStore(durable: boolean, options: MemoryStoreOptions = {}): AgentStore {
  const limits: StoreLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const sessions = new Map<string, StoredSession>();
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
  };

  // The same decoder the real stores use, so an undecodable row is reported the same way.
  const decode = (sessionId: string, text: string, seq: number): MessageRecord =>
    decodeStoredMessage(sessionId, seq, text);

  // Every input reaches these methods checked and copied by core's boundary.
  return defineStore({
    durable,
    limits,

    async load(sessionId, { afterSeq }) {
      assertOpen();
      const stored = sessions.get(sessionId);
      if (!stored) return null;
      const messages = stored.messages
        .slice(afterSeq)
        .map((text, i) => decode(sessionId, text, afterSeq + i + 1));
      return { session: clone(stored.session), messages };
    },

    async append(sessionId, input) {
      assertOpen();
      const now = processClockMs();
      const stored = sessions.get(sessionId);
      const headSeq = stored?.session.headSeq ?? 0;
      // The lease first: a fenced writer learns it lost the lease, not that the new holder appended.
      if (!appendLeaseMatches(stored?.session.lease ?? null, input.lease, now)) {
        throw new LeaseLostError({
          sessionId,
          holder: input.lease?.holder ?? null,
          epoch: input.lease?.epoch ?? null,
        });
      }
      if (headSeq !== input.expectedSeq) {
        throw new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: headSeq });
      }
      const iso = new Date(now).toISOString();
      // Everything that can fail (encoding, cloning) happens before any state changes: all or nothing.
      const encoded = input.messages.map((m, i) => JSON.stringify({ ...m, seq: headSeq + i + 1 }));
      const state = input.session?.state === undefined ? undefined : clone(input.session.state);
      const init = clone(input.session?.init);
      const target: StoredSession = stored ?? {
        session: {
          id: sessionId,
          agentName: init?.agentName ?? '',
          ownerId: init?.ownerId ?? null,
          tenantId: init?.tenantId ?? null,
          state: init?.state ?? null,
          headSeq: 0,
          lease: null,
          createdAt: iso,
          updatedAt: iso,
          incarnationId: newIncarnationId(),
        },
        leaseEpoch: 0,
        messages: [],
      };
      target.messages.push(...encoded);
      target.session.headSeq = headSeq + encoded.length;
      target.session.updatedAt = iso;
      if (state !== undefined) target.session.state = state;
      if (input.releaseLease) target.session.lease = null;
      sessions.set(sessionId, target);
      return { headSeq: target.session.headSeq };
    },

    async acquireLease(sessionId, { holder, ttlMs, init }) {
      assertOpen();
      const now = processClockMs();
      const iso = new Date(now).toISOString();
      let stored = sessions.get(sessionId);
      if (stored && !ownerMatches(stored.session, init)) throw new SessionAccessDeniedError({ sessionId });
      if (stored && !canAcquireLease(stored.session.lease, holder, now)) {
        throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(stored.session.lease!, now) });
      }
      if (!stored) {
        stored = {
          session: {
            id: sessionId,
            ...clone(init),
            headSeq: 0,
            lease: null,
            createdAt: iso,
            updatedAt: iso,
            incarnationId: newIncarnationId(),
          },
          leaseEpoch: 0,
          messages: [],
        };
        sessions.set(sessionId, stored);
      }
      stored.leaseEpoch += 1;
      stored.session.lease = { holder, epoch: stored.leaseEpoch, expiresAt: expiryIso(now, ttlMs) };
      return { epoch: stored.leaseEpoch, session: clone(stored.session) };
    },

    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      assertOpen();
      const lease = sessions.get(sessionId)?.session.lease ?? null;
      if (!lease || lease.holder !== holder || lease.epoch !== epoch) {
        throw new LeaseLostError({ sessionId, holder, epoch });
      }
      lease.expiresAt = expiryIso(processClockMs(), ttlMs);
      return { expiresAt: lease.expiresAt };
    },

    async releaseLease(sessionId, { holder, epoch }) {
      assertOpen();
      const stored = sessions.get(sessionId);
      const lease = stored?.session.lease ?? null;
      if (!stored || !lease || lease.holder !== holder || lease.epoch !== epoch) return { released: false };
      stored.session.lease = null;
      return { released: true };
    },

    async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
      assertOpen();
      const matching = [...sessions.values()]
        .map((s) => s.session)
        .filter(
          (s) =>
            (ownerId === undefined || s.ownerId === ownerId) &&
            (tenantId === undefined || s.tenantId === tenantId) &&
            (agentName === undefined || s.agentName === agentName) &&
            (cursor == null || compareSessionIds(s.id, cursor) > 0),
        )
        .sort((a, b) => compareSessionIds(a.id, b.id));
      const page = matching.slice(0, limit).map(clone);
      return { sessions: page, nextCursor: matching.length > limit ? page[page.length - 1]!.id : null };
    },

    async deleteSession(sessionId) {
      assertOpen();
      return { deleted: sessions.delete(sessionId) };
    },

    async deleteIdleSessions({ idleBefore, limit, cursor }) {
      assertOpen();
      const after = cursor === null ? null : decodeRetentionCursor<string>(cursor, 'string');
      const key = (s: SessionRecord) => [s.updatedAt, s.id] as const;
      const before = (a: readonly [string, string], b: readonly [string, string]) =>
        a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
      // Ordered by (updatedAt, id): the index a real store keeps on activity.
      const candidates = [...sessions.values()]
        .map((s) => s.session)
        .filter((s) => s.updatedAt < idleBefore && (after === null || before(after, key(s))))
        .sort((a, b) => (before(key(a), key(b)) ? -1 : 1))
        .slice(0, limit);
      const now = processClockMs();
      const deleted: string[] = [];
      for (const session of candidates) {
        if (isLeaseLive(session.lease, now)) continue;
        sessions.delete(session.id);
        deleted.push(session.id);
      }
      const last = candidates[candidates.length - 1];
      return {
        deleted,
        nextCursor:
          candidates.length === limit && last ? encodeRetentionCursor(last.updatedAt, last.id) : null,
      };
    },

    async close() {
      closed = true;
    },
  });
}

/**
 * A store with the full contract (seq checks, leases, limits) that lives in this process only.
 * `durable: false`, so `run()` refuses it when given a `sessionId`.
 */
export function memoryStore(options: MemoryStoreOptions = {}): AgentStore {
  return createInMemoryStore(false, options);
}
