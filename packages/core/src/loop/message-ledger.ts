import type { MessageRecord, NewMessage } from '../records.ts';
import type { StoreLimits } from '../store/contract.ts';
import { messageByteLength } from '../store/validation.ts';

/** Where the loop commits messages: the durable store, or memory for a stateless run. */
export interface MessageLedger {
  readonly headSeq: number;
  /** What one commit may carry; the loop splits its writes to fit. */
  readonly limits: StoreLimits;
  /** Commits messages in one atomic append; resolves with them as stored. */
  commit(messages: NewMessage[], options?: { releaseLease?: boolean }): Promise<MessageRecord[]>;
}

export const withSeqs = (messages: NewMessage[], expectedSeq: number): MessageRecord[] =>
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
