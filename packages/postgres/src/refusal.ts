import { LeaseLostError, type LeaseToken, SeqConflictError } from '@agentstore/core';
import { appendLeaseMatches } from '@agentstore/core/store';
import { leaseOf } from './rows.ts';
import { APPEND_REFUSED } from './schema.ts';

/** [head_seq, lease_holder, lease_epoch, lease_expires_at, the server's clock (ISO)] */
type Seen = [number, string | null, number, string | null, string];

/** Whether `error` is the refusal `<prefix>refuse_append` raised (see schema.ts, migration 4). */
export function isAppendRefusal(error: unknown): error is { detail: string } {
  const raised = error as { code?: unknown; message?: unknown; detail?: unknown } | null;
  return raised?.code === 'P0001' && raised.message === APPEND_REFUSED && typeof raised.detail === 'string';
}

/**
 * Why an append was refused, from the refusal's DETAIL: [what the statement's snapshot saw,
 * the row as the function then read it] (each null when there was no row). The snapshot decides
 * (it is what the guard saw first); only where the snapshot would have granted the append did a
 * newer row version refuse it (READ COMMITTED re-checks the guard on the newest version once the
 * row is locked), and that version, read after, says why. The lease first: a fenced writer
 * always learns it was fenced, even once its successor appended.
 */
export function refusalError(
  detail: string,
  context: { sessionId: string; expectedSeq: number; lease: LeaseToken | null },
): LeaseLostError | SeqConflictError {
  const { sessionId, expectedSeq, lease } = context;
  const [snapshot, newest] = JSON.parse(detail) as [Seen | null, Seen | null];
  const leaseLost = () =>
    new LeaseLostError({ sessionId, holder: lease?.holder ?? null, epoch: lease?.epoch ?? null });
  const why = (seen: Seen | null): LeaseLostError | SeqConflictError | null => {
    // No row: no lease to hold, and a head of 0 (which only a first append may expect).
    if (seen === null) {
      if (lease !== null) return leaseLost();
      return expectedSeq !== 0 ? new SeqConflictError({ sessionId, expectedSeq, actualSeq: 0 }) : null;
    }
    const [head, holder, epoch, expiresAt, serverNow] = seen;
    if (!appendLeaseMatches(leaseOf(holder, epoch, expiresAt), lease, Date.parse(serverNow)))
      return leaseLost();
    if (head !== expectedSeq) return new SeqConflictError({ sessionId, expectedSeq, actualSeq: head });
    return null;
  };
  return (
    why(snapshot) ??
    why(newest) ??
    // Granted by both reads: a concurrent writer changed the row in between; its head is unknown.
    new SeqConflictError({ sessionId, expectedSeq, actualSeq: null })
  );
}
