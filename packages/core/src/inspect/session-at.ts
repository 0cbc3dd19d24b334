import { InvalidArgumentError } from '../errors.ts';
import type { AgentStore, LoadResult } from '../store/contract.ts';

/** What a past view of a session knows about its session record, and what it cannot. */
export interface SessionAsOf {
  /** The seq asked for, capped at today's head. */
  seq: number;
  /** Today's head seq, for comparison. */
  headSeqNow: number;
  /**
   * The log records messages, not leases or states: `session.lease` is `null` in the view because
   * the lease held at `seq` is not known, and `session.state` is today's.
   */
  leaseKnown: false;
  stateKnown: false;
}

/** A session as it was at a seq: messages up to it, the session record as far as it is known. */
export interface LoadResultAt extends LoadResult {
  asOf: SessionAsOf;
}

/**
 * The session as it was when its head was `seq`: time travel over the append-only log.
 * `session.headSeq` is `seq`, `session.updatedAt` is the time of the message at `seq` (when its
 * append was made; the session's `createdAt` when `seq` is 0), `session.lease` is `null` because
 * the log does not record leases (see `asOf`), and `session.state` is today's.
 */
export async function loadSessionAt(
  store: AgentStore,
  sessionId: string,
  seq: number,
): Promise<LoadResultAt | null> {
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new InvalidArgumentError({ argument: 'seq', reason: 'must be a non-negative integer' });
  }
  const loaded = await store.load(sessionId);
  if (!loaded) return null;
  const headSeq = Math.min(seq, loaded.session.headSeq);
  const messages = loaded.messages.filter((m) => m.seq <= headSeq);
  return {
    session: {
      ...loaded.session,
      headSeq,
      lease: null,
      updatedAt: messages.at(-1)?.createdAt ?? loaded.session.createdAt,
    },
    messages,
    asOf: { seq: headSeq, headSeqNow: loaded.session.headSeq, leaseKnown: false, stateKnown: false },
  };
}
