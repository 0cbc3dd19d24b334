import { describe, expect, it } from 'vitest';
import { fitsOneAppend, type MessageLedger, planAppends } from '../src/loop/message-ledger.ts';
import { resultCommitter } from '../src/loop/result-committer.ts';
import type { MessageRecord, NewMessage } from '../src/records.ts';
import { messageByteLength } from '../src/store/validation.ts';

// How a step's results are packed into appends and committed: within the store's per-append
// message count and byte budget, in order, and never after an append of the step failed.

const msg = (id: string, content = id): NewMessage => ({
  id,
  role: 'tool',
  content,
  toolCallId: id,
  createdAt: new Date(0).toISOString(),
});

describe('packing messages into appends', () => {
  const a = msg('a', 'x'.repeat(100));
  const b = msg('b', 'y'.repeat(100));
  const c = msg('c', 'z'.repeat(100));
  const one = messageByteLength(a);

  it('respects the per-append byte budget, not only the message count', () => {
    const limits = { maxMessageBytes: 10_000, maxMessagesPerAppend: 100, maxAppendBytes: 2 * one };
    expect(fitsOneAppend([a, b], limits)).toBe(true);
    expect(fitsOneAppend([a, b, c], limits)).toBe(false);
    expect(planAppends([[a], [b], [c]], limits).map((batch) => batch.map((m) => m.id))).toEqual([
      ['a', 'b'],
      ['c'],
    ]);
  });

  it('respects the message count, and keeps a unit (a rejection and its result) in one append', () => {
    const limits = { maxMessageBytes: 10_000, maxMessagesPerAppend: 2 };
    expect(fitsOneAppend([a, b, c], limits)).toBe(false);
    expect(planAppends([[a], [b, c]], limits).map((batch) => batch.map((m) => m.id))).toEqual([
      ['a'],
      ['b', 'c'],
    ]);
  });
});

describe('the result committer', () => {
  it('after one append of the step failed, later results are not appended: they fail with that error', async () => {
    const committed: string[][] = [];
    const failure = new Error('append refused');
    let release!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    let commits = 0;
    const ledger: MessageLedger = {
      headSeq: 0,
      limits: { maxMessageBytes: 10_000, maxMessagesPerAppend: 1 },
      async commit(batch): Promise<MessageRecord[]> {
        commits += 1;
        committed.push(batch.map((m) => m.id));
        await firstHeld;
        throw failure;
      },
    };
    const commitSoon = resultCommitter(ledger);
    const first = commitSoon(msg('r1'));
    const second = commitSoon(msg('r2'));
    const third = commitSoon(msg('r3'));
    release();
    await expect(first).rejects.toBe(failure);
    await expect(second).rejects.toBe(failure);
    await expect(third).rejects.toBe(failure);
    const late = commitSoon(msg('r4'));
    await expect(late).rejects.toBe(failure);
    expect(commits).toBe(1);
    expect(committed).toEqual([['r1']]);
  });
});
