import {
  type AgentStoreError,
  AppendOutcomeUnknownError,
  isAgentStoreError,
  SeqConflictError,
} from '../errors.ts';
import type { JsonValue, NewMessage } from '../records.ts';
import type { AgentStore, AppendInput, LeaseToken, SessionInit } from '../store/contract.ts';
import { abortableSleep } from './abortable-sleep.ts';
import { isDefiniteAppendFailure } from './append-failures.ts';
import { type MessageLedger, withSeqs } from './message-ledger.ts';

/** How many times an append whose outcome was unknown, and proven not landed, is tried again. */
export const MAX_UNKNOWN_OUTCOME_RETRIES = 3;

/**
 * Waits between re-reads of an append whose outcome is unknown, when the re-read itself fails:
 * about 21 s in all, longer than a Redis Cluster master election with the default
 * `cluster-node-timeout` (15 s), after which the outcome is reported unknown.
 */
export const REREAD_RETRY_DELAYS_MS: readonly number[] = [
  100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000,
];

export interface DurableLedgerOptions {
  store: AgentStore;
  sessionId: string;
  lease: LeaseToken;
  headSeq: number;
  init: SessionInit;
  /** The session state written with every append. */
  state: () => JsonValue;
  /**
   * The lease keeper's check: throws once the holder's local lease deadline has passed. Called
   * right before every append and every re-read, so nothing is sent after the deadline.
   */
  assertHeld: () => void;
  /** Aborts when the lease is lost: it cuts short any wait between retries at once. */
  leaseLost: AbortSignal;
  /**
   * The lease keeper's `watch`: bounds every append and re-read by the lease's safe window, so
   * one that never answers makes the holder give the lease up instead of waiting forever.
   * Without it (unit tests of the ledger alone), calls are awaited as they are.
   */
  watch?: <T>(call: Promise<T>, overdue: () => AgentStoreError) => Promise<T>;
}

/** One `store.append` the ledger sent, and what the store answered it, as far as it knows. */
interface AppendAttempt {
  readonly call: Promise<unknown>;
  /** The commit that sent it: an append is retried only within one commit. */
  readonly commit: CommitOutcome;
  answer: 'in-flight' | 'landed' | 'refused' | 'ambiguous';
}

/** How a commit ended, once it has: succeeded, or failed after an attempt without a definite answer. */
interface CommitOutcome {
  ended: 'running' | 'succeeded' | 'failed-unknown' | 'failed';
}

/** The durable ledger also tells when every append it sent has answered. */
export interface DurableLedger extends MessageLedger {
  /**
   * Settles once every `store.append` sent so far has answered, whatever each answered; never, if
   * one never does. A commit can give up on an append before the store answers (unanswered for the
   * lease's safe window): until then the append may still land, so the lease is not freed.
   */
  appendsSettled(): Promise<void>;
  /**
   * True while a commit that failed after an append without a definite answer (a dropped
   * connection, a timeout) has no attempt known to have landed and one that may still land:
   * unanswered, or answered only with a transport error while the store may still be executing
   * it. A release then would fence it and lose what it carries: such a lease is left to lapse.
   */
  readonly outcomeUnconfirmed: boolean;
}

/**
 * Commits through `store.append` with the seq + lease guard. An append that fails without
 * proof of its outcome (timeout, dropped connection) is settled by re-reading the message ids
 * after `expectedSeq`: found means committed, absent means it is safe to try again. Never
 * appends the same messages twice. A lost lease ends this at once: every attempt checks the
 * lease first, and every wait between attempts ends when it is lost.
 */
export function durableLedger(options: DurableLedgerOptions): DurableLedger {
  const { store, sessionId, assertHeld, leaseLost } = options;
  const watch = options.watch ?? (<T>(call: Promise<T>) => call);
  let headSeq = options.headSeq;
  /**
   * The one list of append attempts: "in flight", "outcome unknown" and "settled" are derived
   * from it. An attempt is dropped once answered if its commit succeeded (nothing more to know).
   */
  let attempts: AppendAttempt[] = [];
  const forget = (commit: CommitOutcome) => {
    attempts = attempts.filter((a) => a.commit !== commit || a.answer === 'in-flight');
  };
  const sendAppend = (input: AppendInput, commit: CommitOutcome) => {
    // (The store's own promise when it returns one: no extra turn on the step's path.)
    const call = Promise.resolve(store.append(sessionId, input));
    const attempt: AppendAttempt = { call, commit, answer: 'in-flight' };
    attempts.push(attempt);
    const answered = (answer: AppendAttempt['answer']) => {
      attempt.answer = answer;
      if (commit.ended === 'succeeded') forget(commit);
    };
    call.then(
      () => answered('landed'),
      (error: unknown) => answered(isDefiniteAppendFailure(error) ? 'refused' : 'ambiguous'),
    );
    return call;
  };
  /**
   * Whether `commit` failed after an attempt without a definite answer, has no attempt known to
   * have landed, and one that may still land (unanswered, or answered only by a transport error).
   */
  const unconfirmed = (commit: CommitOutcome) => {
    if (commit.ended !== 'failed-unknown') return false;
    const own = attempts.filter((a) => a.commit === commit);
    return !own.some((a) => a.answer === 'landed') && own.some((a) => a.answer !== 'refused');
  };
  const notAnswered = (what: string) => new Error(`${what} did not answer within the lease's safe window`);

  /**
   * true: our messages are there; false: nothing landed after expectedSeq. A re-read that fails
   * with a transport error (a cluster electing a new master, a restarting server) is tried again
   * within REREAD_RETRY_DELAYS_MS before the outcome is declared unknown.
   */
  async function ownAppendLanded(
    expectedSeq: number,
    messages: NewMessage[],
    cause: unknown,
  ): Promise<boolean> {
    let reread: Awaited<ReturnType<AgentStore['load']>>;
    for (let attempt = 0; ; attempt++) {
      assertHeld();
      try {
        reread = await watch(
          store.load(sessionId, { afterSeq: expectedSeq }),
          () =>
            new AppendOutcomeUnknownError(
              { sessionId, expectedSeq, rereadError: notAnswered('the re-read') },
              { cause },
            ),
        );
        break;
      } catch (error) {
        // Given up meanwhile (the re-read went unanswered, or the deadline passed): that is the error.
        assertHeld();
        // Waiting heals transport errors, not our own typed errors (a corrupt record) nor an
        // error that declares `retryable: false` (a closed client, a simulated dead process).
        const permanent = isAgentStoreError(error) || (error as { retryable?: unknown })?.retryable === false;
        const delay = permanent ? undefined : REREAD_RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          throw new AppendOutcomeUnknownError({ sessionId, expectedSeq, rereadError: error }, { cause });
        }
        await abortableSleep(delay, leaseLost);
      }
    }
    if (!reread || reread.session.headSeq === expectedSeq) return false;
    const ours = messages.every((message, i) => reread.messages[i]?.id === message.id);
    if (ours) return true;
    throw new SeqConflictError({ sessionId, expectedSeq, actualSeq: reread.session.headSeq });
  }

  return {
    get headSeq() {
      return headSeq;
    },
    limits: store.limits,
    appendsSettled: () =>
      Promise.allSettled(attempts.filter((a) => a.answer === 'in-flight').map((a) => a.call)).then(
        () => undefined,
      ),
    get outcomeUnconfirmed() {
      return [...new Set(attempts.map((a) => a.commit))].some(unconfirmed);
    },
    async commit(messages, { releaseLease = false } = {}) {
      const expectedSeq = headSeq;
      const input = {
        expectedSeq,
        messages,
        // `init` counts only when expectedSeq is 0 (the store's contract): not copied and checked
        // again by the store on every later append.
        session:
          expectedSeq === 0 ? { state: options.state(), init: options.init } : { state: options.state() },
        lease: options.lease,
        releaseLease,
      };
      let outcomeUnknown = false;
      const outcome: CommitOutcome = { ended: 'running' };
      try {
        for (let retries = 0; ; retries++) {
          assertHeld();
          try {
            const result = await watch(
              sendAppend(input, outcome),
              () =>
                new AppendOutcomeUnknownError(
                  { sessionId, expectedSeq },
                  { cause: notAnswered('the append') },
                ),
            );
            headSeq = result.headSeq;
            outcome.ended = 'succeeded';
            forget(outcome);
            return withSeqs(messages, expectedSeq);
          } catch (error) {
            // After an unknown outcome, a conflict may be our own earlier attempt landing late, and
            // a lost lease that attempt releasing it (the run's final append carries the release).
            const mustReread =
              !isDefiniteAppendFailure(error) ||
              (outcomeUnknown &&
                (isAgentStoreError(error, 'SEQ_CONFLICT') || isAgentStoreError(error, 'LEASE_LOST')));
            if (!mustReread) throw error;
            outcomeUnknown = true;
            const ours = await ownAppendLanded(expectedSeq, messages, error);
            // The lease is gone. Only an append that released it itself (the run's last) has
            // nothing left to do under it; after any other, even one that landed, the run must
            // stop: another worker may hold the session now, and no retry can land.
            if (isAgentStoreError(error, 'LEASE_LOST') && !(ours && releaseLease)) throw error;
            if (ours) {
              headSeq = expectedSeq + messages.length;
              outcome.ended = 'succeeded';
              forget(outcome);
              return withSeqs(messages, expectedSeq);
            }
            // Proven not to have landed: the failure itself is the answer once retries run out.
            if (retries >= MAX_UNKNOWN_OUTCOME_RETRIES) throw error;
            await abortableSleep(25 * (retries + 1), leaseLost);
          }
        }
      } catch (error) {
        // Failed after an attempt without a definite answer: until one of its attempts is known
        // to have landed, or all to have been refused, one may still land.
        outcome.ended = outcomeUnknown ? 'failed-unknown' : 'failed';
        if (!outcomeUnknown) forget(outcome);
        throw error;
      }
    },
  };
}
