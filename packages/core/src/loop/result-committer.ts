import type { MessageRecord, NewMessage } from '../records.ts';
import { type MessageLedger, planAppends } from './message-ledger.ts';

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
  // Results waiting for the next append, whether a drain is running, and the first failed append
  // (after which every later result fails with it: the run stops).
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
