import { assertContiguous, preview, violation } from '../assertions.ts';
import type { CheckContext } from '../check.ts';
import type { ChildRun } from '../process/spawn-child.ts';

export const RACE_CAUSE =
  "the store checks the head (or the lease) and writes in separate steps, so another process's append lands between one's check and its write. Within one process a synchronous driver never interleaves them, so only several processes show it. Check and write in one transaction that holds the row from the read (BEGIN IMMEDIATE, SELECT … FOR UPDATE, or an UPDATE … WHERE head_seq = expectedSeq whose row count decides), or in one conditional request";

/** Every id in `ids` that occurs more than once, with its count. */
function repeated(ids: readonly (string | number)[]): [string | number, number][] {
  const counts = new Map<string | number, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts].filter(([, n]) => n > 1);
}

/**
 * After several processes raced appends on one session (none killed): each acknowledged append
 * at its own seq, each acknowledged message stored once, one row per seq, the head at the count.
 */
export async function assertRaceOutcome(
  ctx: CheckContext,
  sessionId: string,
  children: ChildRun[],
): Promise<void> {
  const acks = children.flatMap((child) => child.lines.flatMap((line) => (line.t === 'ack' ? [line] : [])));
  const total = acks.length;
  const what = `${total} appends acknowledged by ${children.length} processes racing on one session`;
  const sameSeq = repeated(acks.map((ack) => ack.headSeq));
  if (sameSeq.length > 0) {
    violation(
      `${what}: ${sameSeq.length} seqs were each acknowledged to more than one append (seq ${sameSeq[0]![0]}: ${sameSeq[0]![1]} appends) — appends with the same expectedSeq both committed: ${RACE_CAUSE}`,
    );
  }
  const raw = ctx.capabilities.raw;
  if (raw) {
    const doubled = repeated((await raw.messages(sessionId)).map((row) => row.seq));
    if (doubled.length > 0) {
      violation(
        `${what}: the raw reader finds ${doubled.length} seqs held by more than one message row (seq ${doubled[0]![0]}: ${doubled[0]![1]} rows) — ${RACE_CAUSE}`,
      );
    }
  }
  const loaded = await ctx.store.load(sessionId);
  const head = loaded?.session.headSeq ?? 0;
  if (head !== total) {
    violation(
      `${what}: the head is ${head}, not ${total} — acknowledged appends were written over: ${RACE_CAUSE}`,
    );
  }
  const stored = (loaded?.messages ?? []).map((m) => m.id);
  const lost = acks.flatMap((ack) => ack.ids).filter((id) => !stored.includes(id));
  if (lost.length > 0)
    violation(`${what}: ${lost.length} acknowledged messages are missing: ${preview(lost)}`);
  const twice = repeated(stored);
  if (twice.length > 0) violation(`${what}: messages stored more than once: ${preview(twice)}`);
  await assertContiguous(ctx, sessionId, what);
}
