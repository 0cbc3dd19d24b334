import type { AgentStore, LoadResult } from '@agentstore/core';
import { NOT_ATOMIC_CAUSE, violation } from '../assertions.ts';
import { batchFault, batchMessages } from '../batches.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, sessionInit } from '../fixtures.ts';
import type { RawReader } from '../target.ts';

const BATCHES = 240;
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Batch sizes 2…8 (or the store's limit), varied so a store cannot be right by accident at one size. */
const batchSize = (k: number, limit: number) => Math.min(limit, 2 + ((k * 5) % 7));

function checkLoad(loaded: LoadResult | null, sessionId: string): void {
  if (!loaded) return;
  const { session, messages } = loaded;
  if (messages.length !== session.headSeq) {
    const shape =
      messages.length > session.headSeq
        ? 'messages beyond the head'
        : 'a head beyond the messages (the head moved before the messages were written)';
    violation(
      `a second store instance loaded ${sessionId} with headSeq ${session.headSeq} and ${messages.length} messages — ${shape}: ${NOT_ATOMIC_CAUSE}`,
    );
  }
  const fault = batchFault(messages);
  if (fault) violation(`a second store instance loaded part of an append: ${fault} — ${NOT_ATOMIC_CAUSE}`);
}

/**
 * The raw reader is not a snapshot, so it reads the head, then the rows, then the head again: an
 * atomic store can never show a row beyond the later head, nor fewer rows than the earlier one.
 */
async function checkRaw(raw: RawReader, sessionId: string): Promise<void> {
  const before = await raw.session(sessionId);
  const rows = await raw.messages(sessionId);
  const after = await raw.session(sessionId);
  if (before && rows.length < before.headSeq) {
    violation(
      `the raw reader saw head ${before.headSeq}, then only ${rows.length} message rows: a head beyond the messages — ${NOT_ATOMIC_CAUSE}`,
    );
  }
  const head = after?.headSeq ?? 0;
  const beyond = rows.filter((row) => row.seq > head);
  if (beyond.length > 0) {
    violation(
      `the raw reader saw ${beyond.length} message rows (seqs ${beyond[0]!.seq}–${beyond.at(-1)!.seq}) beyond the head ${head}, read after them — ${NOT_ATOMIC_CAUSE}. A crash between the two writes leaves those rows for good, and every later append of the session fails with SeqConflictError`,
    );
  }
  const fault = batchFault(rows);
  if (fault) violation(`the raw reader saw part of an append: ${fault} — ${NOT_ATOMIC_CAUSE}`);
}

const atomicityObservedChecks: ConformanceCheck[] = [
  {
    name: `while one store appends ${BATCHES} batches of 2–8 messages, a second store instance and the raw reader never see part of one, a message beyond the head or a head beyond the messages`,
    timeoutMs: 180_000,
    async run(ctx) {
      const id = freshId('observed');
      const observer: AgentStore = await ctx.target.createStore();
      const raw = ctx.capabilities.raw;
      const limit = ctx.store.limits.maxMessagesPerAppend;
      let writing = true;
      let stopped = false;
      const writer = async () => {
        try {
          let head = 0;
          for (let k = 1; k <= BATCHES && !stopped; k++) {
            const batch = batchMessages('observed', k, batchSize(k, limit));
            ({ headSeq: head } = await ctx.store.append(id, {
              expectedSeq: head,
              messages: batch,
              session: { init: sessionInit() },
              lease: null,
            }));
            // In-process readers get a turn even against a store whose calls never yield.
            await yieldTurn();
          }
        } finally {
          writing = false;
        }
      };
      const watch = async (look: () => Promise<void>) => {
        try {
          while (writing) {
            await look();
            await yieldTurn();
          }
          await look();
        } catch (error) {
          stopped = true;
          throw error;
        }
      };
      try {
        // Settle all before cleaning up: a reader's violation stops the writer at its next batch.
        const outcomes = await Promise.allSettled([
          writer(),
          watch(async () => checkLoad(await observer.load(id), id)),
          ...(raw ? [watch(() => checkRaw(raw, id))] : []),
        ]);
        const failure = outcomes.find((outcome) => outcome.status === 'rejected');
        if (failure) throw (failure as PromiseRejectedResult).reason;
      } finally {
        await (ctx.target.destroyStore ? ctx.target.destroyStore(observer) : observer.close());
        await ctx.store.deleteSession(id);
      }
    },
  },
];

export const atomicityObservedSpec: ConformanceSpec = {
  title: 'atomicity seen from outside',
  checks: atomicityObservedChecks,
};
