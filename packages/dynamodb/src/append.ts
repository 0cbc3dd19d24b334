import { type AppendInput, LeaseLostError, SeqConflictError } from '@agentstore/core';
import { appendLeaseMatches } from '@agentstore/core/store';
import { type CancellationReason, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { appendToken, buildAppendTransaction, messagePuts } from './append-transaction.ts';
import { backoff, errorName, type StoreContext } from './context.ts';
import { storedHeadSeq, storedLease } from './session-item.ts';

const MAX_ATTEMPTS = 5;
/** Cancellation codes that mean "nothing was written, try again", not "your condition failed". */
const TRANSIENT = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

/**
 * What a cancelled append means. Reason 0 is the session update, the only conditioned item: its
 * ALL_OLD item shows the lease check failed (LeaseLostError, preferred when both checks fail, so
 * a fenced writer always learns it was fenced) or gives the stored head (SeqConflictError).
 */
function cancellationError(
  context: StoreContext,
  sessionId: string,
  input: AppendInput,
  reasons: CancellationReason[],
  nowMs: number,
): Error | 'retry' | null {
  const [session] = reasons;
  if (session?.Code === 'ConditionalCheckFailed') {
    const stored = session.Item ? storedLease(sessionId, session.Item) : null;
    if (!appendLeaseMatches(stored, input.lease, nowMs - context.maxClockSkewMs)) {
      return new LeaseLostError({
        sessionId,
        holder: input.lease?.holder ?? null,
        epoch: input.lease?.epoch ?? null,
      });
    }
    const actualSeq = storedHeadSeq(session.Item);
    return new SeqConflictError({
      sessionId,
      expectedSeq: input.expectedSeq,
      actualSeq: actualSeq === input.expectedSeq ? null : actualSeq,
    });
  }
  if (reasons.some((reason) => TRANSIENT.has(reason.Code ?? ''))) return 'retry';
  return null;
}

/**
 * One TransactWriteItems per append. The store itself retries only when DynamoDB proves nothing
 * was written (a transaction conflict or throttling cancellation) or the token was refused.
 */
export async function appendMessages(
  context: StoreContext,
  sessionId: string,
  input: AppendInput,
): Promise<{ headSeq: number }> {
  const headSeq = input.expectedSeq + input.messages.length;
  const puts = messagePuts(context, sessionId, input);
  // A resend under the same token must carry exactly the same parameters, `now` included.
  const build = () =>
    new TransactWriteItemsCommand(
      buildAppendTransaction(
        context,
        sessionId,
        input,
        Date.now(),
        appendToken(context.tableName, sessionId, input),
        puts,
      ),
    );
  let command = build();
  for (let attempt = 1; ; attempt++) {
    try {
      // Success, including a resend of this token after a commit whose response was lost.
      await context.client.send(command);
      return { headSeq };
    } catch (error) {
      const name = errorName(error);
      let retry = false;
      let fresh = false;
      if (name === 'TransactionCanceledException') {
        const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
        const mapped = cancellationError(context, sessionId, input, reasons, Date.now());
        if (mapped instanceof Error) throw mapped;
        // Cancelled means nothing was written; resend under a new token so no server-side
        // memory of the cancelled one can answer for it.
        if (mapped === 'retry') retry = fresh = true;
      } else if (name === 'IdempotentParameterMismatchException') {
        // The token was used with other parameters (a collision, never our own resend): the
        // guards make a fresh token safe.
        retry = fresh = true;
      } else if (name === 'TransactionInProgressException') {
        // An earlier send of this very token is still running; resending it is idempotent.
        retry = true;
      }
      if (!retry || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      if (fresh) command = build();
    }
  }
}
