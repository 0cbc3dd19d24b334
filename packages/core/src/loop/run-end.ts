import { isAgentStoreError } from '../errors.ts';
import type { LeasePhase } from './lease-state.ts';

/*
 * How a durable run ends, as pure functions from facts to an action: whether the lease is
 * released (now, after the writes still going, or not at all), and where a failed release is
 * reported. run() gathers the facts and carries the action out; nothing else decides it.
 */

export interface RunEndFacts {
  outcome: 'succeeded' | 'failed';
  lease: LeasePhase;
  /** The run's error is a LeaseLostError about this run's own lease. */
  errorSaysLeaseLost: boolean;
  /** A commit failed after an append without a definite answer, and that append may still land. */
  outcomeUnconfirmed: boolean;
  /** An append still unanswered, or results of finished handlers still to be sent. */
  writesInFlight: boolean;
}

export type RunEndAction =
  /** Nothing to release: freed by the final append, lost or given up, or an append may still land. */
  | { release: 'none'; why: 'freed-by-final-append' | 'lease-gone' | 'append-may-land' }
  /** Release now and wait for it; a failure goes on the result (success) or the error (failure). */
  | { release: 'now' }
  /** Release unawaited once every write has settled, if `releaseAfterWrites` then says so. */
  | { release: 'after-writes' };

export function decideRunEnd(facts: RunEndFacts): RunEndAction {
  if (facts.lease === 'released') return { release: 'none', why: 'freed-by-final-append' };
  // Everything is committed: a release only frees the session sooner, whatever the lease's state.
  if (facts.outcome === 'succeeded') return { release: 'now' };
  // A lease lost or given up is not released: it lapses in the store. (The caller's abort reason
  // may be any error, a LeaseLostError of another run's included: only our own counts.)
  if (facts.lease === 'lost' || facts.lease === 'expired' || facts.errorSaysLeaseLost) {
    return { release: 'none', why: 'lease-gone' };
  }
  // A release would fence an append that may still land, and lose what it carries.
  if (facts.outcomeUnconfirmed) return { release: 'none', why: 'append-may-land' };
  // Released now, the lease would fence writes still going and drop results whose effects happened.
  if (facts.writesInFlight) return { release: 'after-writes' };
  return { release: 'now' };
}

/**
 * Once the writes a failed run left going have settled: release unless the final append freed
 * the lease meanwhile, the store refused it as lost, or an append may still land. (A lease the
 * holder gave up locally is still released: the store may hold it for a while yet.)
 */
export function releaseAfterWrites(facts: { lease: LeasePhase; outcomeUnconfirmed: boolean }): boolean {
  return (facts.lease === 'held' || facts.lease === 'expired') && !facts.outcomeUnconfirmed;
}

export interface FailedRunFacts {
  /** The run's error. */
  error: unknown;
  sessionId: string;
  /** The caller's abort reason, when it aborted. */
  callerReason: unknown;
  /** What the release failed with. */
  releaseError: unknown;
}

/**
 * Where a release that failed after the run failed is told: on the run's error as
 * `leaseReleaseError` only when that error is one of agentstore's own about this session, made for
 * this run and not carrying one already; any other (the caller's abort reason, a model client's
 * memoised rejection) may be shared by several runs, and the release's own error cannot carry
 * itself. Otherwise `onBackgroundError`. (Attaching can still fail: a frozen error, a Proxy.)
 */
export function releaseFailureGoesTo(facts: FailedRunFacts): 'error' | 'background' {
  const { error } = facts;
  const ours =
    isAgentStoreError(error) &&
    (error as { sessionId?: unknown }).sessionId === facts.sessionId &&
    !Object.hasOwn(error, 'leaseReleaseError') &&
    !Object.is(error, facts.callerReason) &&
    !Object.is(facts.releaseError, error);
  return ours ? 'error' : 'background';
}
