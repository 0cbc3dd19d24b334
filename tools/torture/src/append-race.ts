import type { TrialFindings } from './invariants.ts';
import { finishWorker, type StoreContext, spawnAppendRacer, tally } from './scenario-kit.ts';
import type { TrialOutcome } from './scenarios.ts';

/** Appends each racer must have acknowledged. */
export const APPENDS_PER_RACER = 30;

/** Why two racing appends both committed at one seq, or one failed on the database's unique key. */
const NO_GUARD_CAUSE =
  'the store checks the head (and the lease) outside its write, so two processes read the same head and both write: check and write in one transaction that holds the session row (SELECT … FOR UPDATE, BEGIN IMMEDIATE, or an UPDATE … WHERE head_seq = expectedSeq whose row count decides), and keep a unique key on (session, seq)';
const UNIQUE_KEY = /duplicate key|unique constraint|Duplicate entry|UNIQUE constraint failed/i;

/**
 * `racers` processes append to one session at once, without leases, one message at a time at the
 * loaded head, reloading on SeqConflictError. Leases serialise every other scenario's writers, so
 * only this one shows a store whose seq check is not part of its write: acknowledged appends that
 * share a seq, rows stored twice at one seq, or a raw unique-key error instead of SeqConflictError.
 */
export async function appendRaceTrial(
  ctx: StoreContext,
  trial: number,
  racers: number,
): Promise<TrialOutcome> {
  const sessionId = `torture-${ctx.seed}-${ctx.nonce}-append-race${racers}-${trial}`;
  const workers = Array.from({ length: racers }, () => spawnAppendRacer(ctx, sessionId, APPENDS_PER_RACER));
  await Promise.all(workers.map((worker) => worker.ready));
  for (const worker of workers) worker.go();
  const runs = await Promise.all(workers.map((worker) => finishWorker(worker)));

  const violations: string[] = [];
  let duplicates = 0;
  let lost = 0;
  const acks = runs.flatMap((run) => run.lines.flatMap((line) => (line.t === 'ack' ? [line] : [])));
  const bySeq = new Map<number, number>();
  for (const ack of acks) bySeq.set(ack.headSeq, (bySeq.get(ack.headSeq) ?? 0) + 1);
  const shared = [...bySeq].filter(([, count]) => count > 1);
  if (shared.length > 0) {
    violations.push(
      `${shared.length} seqs were each acknowledged to more than one append (e.g. seq ${shared[0]![0]} to ${shared[0]![1]}) — ${NO_GUARD_CAUSE}`,
    );
  }
  const rows = await ctx.raw.messages(sessionId);
  const rowsPerSeq = new Map<number, number>();
  for (const row of rows) rowsPerSeq.set(row.seq, (rowsPerSeq.get(row.seq) ?? 0) + 1);
  const doubled = [...rowsPerSeq].filter(([, count]) => count > 1);
  if (doubled.length > 0) {
    duplicates += doubled.reduce((sum, [, count]) => sum + count - 1, 0);
    violations.push(
      `${doubled.length} seqs hold more than one message row (e.g. seq ${doubled[0]![0]}: ${doubled[0]![1]} rows) — ${NO_GUARD_CAUSE}`,
    );
  }
  const stored = new Set(rows.map((row) => row.id));
  const missing = acks.filter((ack) => !stored.has(ack.ids[0]!));
  if (missing.length > 0) {
    lost += missing.length;
    violations.push(`${missing.length} acknowledged appends are not stored (e.g. ${missing[0]!.ids[0]})`);
  }
  const loaded = await ctx.store.load(sessionId);
  if (loaded?.session.headSeq !== acks.length) {
    violations.push(
      `head seq ${loaded?.session.headSeq ?? 'none'} after ${acks.length} acknowledged appends`,
    );
  }
  for (const run of runs) {
    const failed = run.lines.find((line) => line.t === 'error');
    if (failed?.t === 'error') {
      const cause = UNIQUE_KEY.test(failed.message)
        ? ` — the database's unique key caught a race the store's check missed: ${NO_GUARD_CAUSE}, and report the conflict as SeqConflictError`
        : '';
      violations.push(
        `racer ${run.worker.pid} failed: ${failed.code ?? failed.name}: ${failed.message}${cause}`,
      );
    } else if (run.hung || run.error) {
      violations.push(
        `racer ${run.worker.pid} ended with ${run.hung ? 'a hang' : run.error}: ${run.worker.stderr().slice(-400)}`,
      );
    }
  }
  const findings: TrialFindings = { violations, duplicates, lost };
  const outcome: TrialOutcome = {
    scenario: 'append-race',
    trial,
    sessionId,
    kills: 0,
    resumes: racers - 1,
    completed: runs.every((run) => run.lines.some((line) => line.t === 'done')),
    workerErrors: {},
    appendErrors: {},
    restarts: 0,
    facts: { racers, acknowledged: acks.length },
    findings,
  };
  for (const run of runs) {
    if (run.error) tally(outcome.workerErrors, run.error);
    for (const line of run.lines)
      if (line.t === 'append-error') tally(outcome.appendErrors, line.code ?? line.name);
  }
  return outcome;
}
