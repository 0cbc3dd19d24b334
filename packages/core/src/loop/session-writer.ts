import {
  type AgentStoreError,
  AppendOutcomeUnknownError,
  isAgentStoreError,
  isDefiniteAppendFailure,
  SeqConflictError,
} from '../errors.ts';
import type { JsonValue, MessageRecord, NewMessage } from '../records.ts';
import type { AgentStore, AppendInput, LeaseToken, SessionInit, StoreLimits } from '../store/contract.ts';
import { messageByteLength } from '../store/validation.ts';
import { abortableSleep } from './abortable-sleep.ts';

/** Where the loop commits messages: the durable store, or memory for a stateless run. */
export interface MessageLedger {
  readonly headSeq: number;
  /** What one commit may carry; the loop splits its writes to fit. */
  readonly limits: StoreLimits;
  /** Commits messages in one atomic append; resolves with them as stored. */
  commit(messages: NewMessage[], options?: { releaseLease?: boolean }): Promise<MessageRecord[]>;
}

/** How many times an append whose outcome was unknown, and proven not landed, is tried again. */
const MAX_UNKNOWN_OUTCOME_RETRIES = 3;

/**
 * Waits between re-reads of an append whose outcome is unknown, when the re-read itself fails:
 * about 21 s in all, longer than a Redis Cluster master election with the default
 * `cluster-node-timeout` (15 s), after which the outcome is reported unknown.
 */
export const REREAD_RETRY_DELAYS_MS: readonly number[] = [
  100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000,
];

const withSeqs = (messages: NewMessage[], expectedSeq: number): MessageRecord[] =>
  messages.map((message, i) => ({ ...message, seq: expectedSeq + i + 1 }));

const UNLIMITED: StoreLimits = {
  maxMessageBytes: Number.POSITIVE_INFINITY,
  maxMessagesPerAppend: Number.POSITIVE_INFINITY,
};

/** The most one result message may weigh: the per-message limit, or the whole append's budget if smaller. */
export const maxResultBytes = (limits: StoreLimits): number =>
  Math.min(limits.maxMessageBytes, limits.maxAppendBytes ?? Number.POSITIVE_INFINITY);

/** Whether `messages` fit one append under `limits`. */
export function fitsOneAppend(messages: NewMessage[], limits: StoreLimits): boolean {
  if (messages.length > limits.maxMessagesPerAppend) return false;
  if (limits.maxAppendBytes === undefined) return true;
  let bytes = 0;
  for (const message of messages) bytes += messageByteLength(message);
  return bytes <= limits.maxAppendBytes;
}

/**
 * Packs `units` (groups of messages that must land in the same append, e.g. a rejection and its
 * result) in order into as few appends as `limits` allow. A unit too big on its own gets an
 * append of its own, which the store then refuses with a typed error before writing anything.
 */
export function planAppends(units: NewMessage[][], limits: StoreLimits): NewMessage[][] {
  const appends: NewMessage[][] = [];
  let current: NewMessage[] = [];
  let bytes = 0;
  const budget = limits.maxAppendBytes ?? Number.POSITIVE_INFINITY;
  for (const unit of units) {
    const unitBytes =
      budget === Number.POSITIVE_INFINITY ? 0 : unit.reduce((n, m) => n + messageByteLength(m), 0);
    if (
      current.length &&
      (current.length + unit.length > limits.maxMessagesPerAppend || bytes + unitBytes > budget)
    ) {
      appends.push(current);
      current = [];
      bytes = 0;
    }
    current.push(...unit);
    bytes += unitBytes;
  }
  if (current.length) appends.push(current);
  return appends;
}

/** Commits the appends one after another; only the last may release the lease. */
export async function commitAll(
  ledger: MessageLedger,
  appends: NewMessage[][],
  options: { releaseLease?: boolean } = {},
): Promise<MessageRecord[]> {
  const records: MessageRecord[] = [];
  for (const [i, batch] of appends.entries()) {
    const last = i === appends.length - 1;
    records.push(...(await ledger.commit(batch, last && options.releaseLease ? { releaseLease: true } : {})));
  }
  return records;
}

export function statelessLedger(): MessageLedger {
  let headSeq = 0;
  return {
    get headSeq() {
      return headSeq;
    },
    limits: UNLIMITED,
    async commit(messages) {
      const records = withSeqs(messages, headSeq);
      headSeq += messages.length;
      return records;
    },
  };
}

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

/** What the store answered one append attempt, as far as the ledger knows. */
interface Attempt {
  answer: 'pending' | 'landed' | 'refused' | 'ambiguous';
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
  /** The appends sent and not yet answered by the store. */
  const pending = new Set<Promise<unknown>>();
  /** The attempts of each commit that failed after an attempt without a definite answer. */
  const unconfirmed: Attempt[][] = [];
  const sendAppend = (input: AppendInput, attempts: Attempt[]) => {
    // (The store's own promise when it returns one: no extra turn on the step's path.)
    const call = Promise.resolve(store.append(sessionId, input));
    const attempt: Attempt = { answer: 'pending' };
    attempts.push(attempt);
    pending.add(call);
    call.then(
      () => {
        pending.delete(call);
        attempt.answer = 'landed';
      },
      (error: unknown) => {
        pending.delete(call);
        attempt.answer = isDefiniteAppendFailure(error) ? 'refused' : 'ambiguous';
      },
    );
    return call;
  };
  const notAnswered = (what: string) => new Error(`${what} did not answer within the lease's safe window`);

  /**
   * true: our messages are there; false: nothing landed after expectedSeq. A re-read that fails
   * with a transport error (a cluster electing a new master, a restarting server) is tried again
   * within REREAD_RETRY_DELAYS_MS before the outcome is declared unknown.
   */
  async function landed(expectedSeq: number, messages: NewMessage[], cause: unknown): Promise<boolean> {
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
    appendsSettled: () => Promise.allSettled([...pending]).then(() => undefined),
    get outcomeUnconfirmed() {
      return unconfirmed.some(
        (attempts) =>
          !attempts.some((a) => a.answer === 'landed') && attempts.some((a) => a.answer !== 'refused'),
      );
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
      const attempts: Attempt[] = [];
      try {
        for (let retries = 0; ; retries++) {
          assertHeld();
          try {
            const result = await watch(
              sendAppend(input, attempts),
              () =>
                new AppendOutcomeUnknownError(
                  { sessionId, expectedSeq },
                  { cause: notAnswered('the append') },
                ),
            );
            headSeq = result.headSeq;
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
            const ours = await landed(expectedSeq, messages, error);
            // The lease is gone. Only an append that released it itself (the run's last) has
            // nothing left to do under it; after any other, even one that landed, the run must
            // stop: another worker may hold the session now, and no retry can land.
            if (isAgentStoreError(error, 'LEASE_LOST') && !(ours && releaseLease)) throw error;
            if (ours) {
              headSeq = expectedSeq + messages.length;
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
        if (outcomeUnknown) unconfirmed.push(attempts);
        throw error;
      }
    },
  };
}

/**
 * Commits each result as soon as it settles. Results that settle while an append is in flight
 * (or in the same tick) wait for it and then go out together, split across as many appends as
 * the store's limits require; appends stay strictly sequential. After a failed append every
 * later result fails with the same error (the run stops; the next run resolves the open calls).
 */
export function resultCommitter(ledger: MessageLedger) {
  interface Waiting {
    message: NewMessage;
    resolve: (records: MessageRecord[]) => void;
    reject: (error: unknown) => void;
  }
  let queue: Waiting[] = [];
  let draining = false;
  let failure: { error: unknown } | null = null;

  async function drain(): Promise<void> {
    while (queue.length) {
      if (failure) {
        for (const waiting of queue) waiting.reject(failure.error);
        queue = [];
        break;
      }
      const [batch] = planAppends(
        queue.map((waiting) => [waiting.message]),
        ledger.limits,
      ) as [NewMessage[]];
      const taken = queue.splice(0, batch.length);
      try {
        const records = await ledger.commit(batch);
        for (const [i, waiting] of taken.entries()) waiting.resolve([records[i]!]);
      } catch (error) {
        failure = { error };
        for (const waiting of taken) waiting.reject(error);
      }
    }
    draining = false;
  }

  return function commitSoon(message: NewMessage): Promise<MessageRecord[]> {
    return new Promise((resolve, reject) => {
      queue.push({ message, resolve, reject });
      if (draining) return;
      draining = true;
      // One microtask late, so results that settle in the same tick share the first append.
      queueMicrotask(() => void drain());
    });
  };
}
