import {
  AppendOutcomeUnknownError,
  isAgentStoreError,
  isDefiniteAppendFailure,
  SeqConflictError,
} from './errors.ts';
import type { JsonValue, MessageRecord, NewMessage } from './records.ts';
import type { AgentStore, LeaseToken, SessionInit } from './store.ts';

/** Where the loop commits messages: the durable store, or memory for a stateless run. */
export interface MessageLedger {
  readonly headSeq: number;
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

export function statelessLedger(): MessageLedger {
  let headSeq = 0;
  return {
    get headSeq() {
      return headSeq;
    },
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
}

/**
 * Commits through `store.append` with the seq + lease guard. An append that fails without
 * proof of its outcome (timeout, dropped connection) is settled by re-reading the message ids
 * after `expectedSeq`: found means committed, absent means it is safe to try again. Never
 * appends the same messages twice.
 */
export function durableLedger(options: DurableLedgerOptions): MessageLedger {
  const { store, sessionId } = options;
  let headSeq = options.headSeq;

  /**
   * true: our messages are there; false: nothing landed after expectedSeq. A re-read that fails
   * with a transport error (a cluster electing a new master, a restarting server) is tried again
   * within REREAD_RETRY_DELAYS_MS before the outcome is declared unknown.
   */
  async function landed(expectedSeq: number, messages: NewMessage[], cause: unknown): Promise<boolean> {
    let reread: Awaited<ReturnType<AgentStore['load']>>;
    for (let attempt = 0; ; attempt++) {
      try {
        reread = await store.load(sessionId, { afterSeq: expectedSeq });
        break;
      } catch (error) {
        // Waiting heals transport errors, not our own typed errors (a corrupt record) nor an
        // error that declares `retryable: false` (a closed client, a simulated dead process).
        const permanent = isAgentStoreError(error) || (error as { retryable?: unknown })?.retryable === false;
        const delay = permanent ? undefined : REREAD_RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          throw new AppendOutcomeUnknownError({ sessionId, expectedSeq, rereadError: error }, { cause });
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
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
    async commit(messages, { releaseLease = false } = {}) {
      const expectedSeq = headSeq;
      const input = {
        expectedSeq,
        messages,
        session: { state: options.state(), init: options.init },
        lease: options.lease,
        releaseLease,
      };
      let outcomeUnknown = false;
      for (let retries = 0; ; retries++) {
        try {
          const result = await store.append(sessionId, input);
          headSeq = result.headSeq;
          return withSeqs(messages, expectedSeq);
        } catch (error) {
          // A conflict after an unknown outcome may be our own earlier attempt landing late.
          const mustReread =
            !isDefiniteAppendFailure(error) || (outcomeUnknown && isAgentStoreError(error, 'SEQ_CONFLICT'));
          if (!mustReread) throw error;
          outcomeUnknown = true;
          if (await landed(expectedSeq, messages, error)) {
            headSeq = expectedSeq + messages.length;
            return withSeqs(messages, expectedSeq);
          }
          // Proven not to have landed: the failure itself is the answer once retries run out.
          if (retries >= MAX_UNKNOWN_OUTCOME_RETRIES) throw error;
          await new Promise((resolve) => setTimeout(resolve, 25 * (retries + 1)));
        }
      }
    },
  };
}

/**
 * Batches results that settle while an append is in flight into the next append, so each
 * result commits as soon as possible and appends stay strictly sequential.
 */
export function resultCommitter(ledger: MessageLedger) {
  let tail: Promise<unknown> = Promise.resolve();
  let open: { messages: NewMessage[]; done: Promise<MessageRecord[]> } | null = null;
  let failure: unknown = null;

  return function commitSoon(message: NewMessage): Promise<MessageRecord[]> {
    if (open) {
      open.messages.push(message);
      return open.done;
    }
    const messages = [message];
    const done = tail.then(() => {
      open = null;
      if (failure !== null) throw failure;
      return ledger.commit(messages).catch((error: unknown) => {
        failure = error;
        throw error;
      });
    });
    open = { messages, done };
    // Sequencing only: every caller awaits `done` and sees its rejection.
    tail = done.catch(() => undefined);
    return done;
  };
}
