import type { NewMessage } from '@agentstore/core';
import {
  assert,
  assertConflictHead,
  assertContiguous,
  assertEqual,
  assertMessages,
  preview,
  violation,
} from '../assertions.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { asRecords, freshId, messages, seedSession, sessionInit } from '../fixtures.ts';
import { lostRaceMessage } from '../race-causes.ts';

const WRITERS = 8;

/** N writers append at once with the same expectedSeq: exactly one may commit. */
async function race(ctx: CheckContext, sessionId: string, expectedSeq: number, seeded: NewMessage[]) {
  const batches = Array.from({ length: WRITERS }, () => messages(3));
  const outcomes = await Promise.allSettled(
    batches.map((batch, writer) =>
      ctx.store.append(sessionId, {
        expectedSeq,
        messages: batch,
        session: { state: { writer }, init: sessionInit() },
        lease: null,
      }),
    ),
  );
  const winners = outcomes.flatMap((outcome, writer) => (outcome.status === 'fulfilled' ? [writer] : []));
  assert(
    winners.length === 1,
    `${WRITERS} concurrent appends with expectedSeq ${expectedSeq}: ${winners.length} committed (writers ${preview(winners)}); exactly one must${winners.length > 1 ? ' — the store does not check expectedSeq against the stored head inside its write' : ''}`,
  );
  const winner = winners[0]!;
  const head = expectedSeq + 3;
  assertEqual(
    (outcomes[winner] as PromiseFulfilledResult<{ headSeq: number }>).value,
    { headSeq: head },
    'the winner’s result',
  );
  for (const [writer, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const error = outcome.reason as {
      code?: unknown;
      sessionId?: unknown;
      expectedSeq?: unknown;
      actualSeq?: unknown;
    };
    if (error?.code !== 'SEQ_CONFLICT') {
      violation(lostRaceMessage(`writer ${writer}, which lost the race,`, error));
    }
    assertEqual(error.sessionId, sessionId, `writer ${writer}: SeqConflictError.sessionId`);
    assertEqual(error.expectedSeq, expectedSeq, `writer ${writer}: SeqConflictError.expectedSeq`);
    assertConflictHead(error, head, `writer ${writer}`);
  }
  const loaded = await assertContiguous(ctx, sessionId, 'after the race');
  assertMessages(
    loaded.messages,
    [...asRecords(seeded, 1), ...asRecords(batches[winner]!, expectedSeq + 1)],
    'stored messages after the race',
  );
  assertEqual(
    loaded.session.state,
    { writer: winner },
    'session state (the winner’s, written with its messages)',
  );
}

const concurrencyChecks: ConformanceCheck[] = [
  {
    name: `of ${WRITERS} concurrent first appends to a new session exactly one commits`,
    async run(ctx) {
      await race(ctx, freshId('race-new'), 0, []);
    },
  },
  {
    name: `of ${WRITERS} concurrent appends with the same expectedSeq exactly one commits; the rest get SeqConflictError`,
    async run(ctx) {
      const id = freshId('race');
      const seeded = await seedSession(ctx.store, id, 2);
      await race(ctx, id, 2, seeded);
    },
  },
  {
    name: 'writers that retry on SeqConflictError keep seqs contiguous with every message once',
    timeoutMs: 60_000,
    async run(ctx) {
      const id = freshId('contend');
      await seedSession(ctx.store, id, 1);
      const writers = 4;
      const perWriter = 5;
      const written: string[][] = Array.from({ length: writers }, () => []);
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          for (let n = 0; n < perWriter; n++) {
            const next = messages(1, { content: `writer ${writer} message ${n}` });
            for (let attempt = 0; ; attempt++) {
              assert(attempt < 200, `writer ${writer} could not append after 200 conflicts`);
              const head = (await ctx.store.load(id))!.session.headSeq;
              try {
                await ctx.store.append(id, { expectedSeq: head, messages: next, lease: null });
                written[writer]!.push(next[0]!.id);
                break;
              } catch (error) {
                if ((error as { code?: unknown }).code !== 'SEQ_CONFLICT') {
                  violation(lostRaceMessage(`writer ${writer}'s append at the loaded head ${head}`, error));
                }
              }
            }
          }
        }),
      );
      const loaded = await assertContiguous(ctx, id, 'after contended appends');
      assertEqual(loaded.session.headSeq, 1 + writers * perWriter, 'headSeq after contended appends');
      const stored = loaded.messages.map((m) => m.id);
      for (const [writer, ids] of written.entries()) {
        const order = ids.map((messageId) => stored.indexOf(messageId));
        assert(!order.includes(-1), `writer ${writer}: an acknowledged message is missing`);
        assert(
          order.every((position, i) => i === 0 || position > order[i - 1]!),
          `writer ${writer}: its messages are stored out of order`,
        );
      }
    },
  },
];

export const concurrencySpec: ConformanceSpec = {
  title: 'optimistic concurrency',
  checks: concurrencyChecks,
};
