import type { NewMessage } from '@agentstore/core';
import { message } from './fixtures.ts';

/**
 * Messages whose ids say which append they belong to (`b<batch>-<i>of<n>-<tag>`), so anyone who
 * reads them back — another store instance, the raw reader, another process — can tell a whole
 * append from part of one without knowing what the writer did.
 */
export function batchMessages(tag: string, batch: number, size: number): NewMessage[] {
  return Array.from({ length: size }, (_, i) =>
    message({ id: `b${batch}-${i + 1}of${size}-${tag}`, content: `batch ${batch}, ${i + 1} of ${size}` }),
  );
}

const BATCH_ID = /^b(\d+)-(\d+)of(\d+)-/;

/**
 * What is wrong with `rows` (stored messages in seq order, from seq 1) as a sequence of whole
 * appends: a gap in the seqs, or an append of which only some messages are there. Null when
 * every batch is whole. Ids that are not batch ids (other writers' messages) are skipped.
 */
export function batchFault(rows: readonly { seq: number; id: string }[]): string | null {
  let open: { batch: number; next: number; size: number; firstSeq: number } | null = null;
  for (const [i, row] of rows.entries()) {
    if (row.seq !== i + 1) return `seqs are not contiguous: position ${i + 1} holds seq ${row.seq}`;
    const match = BATCH_ID.exec(row.id);
    if (!match) continue;
    const [batch, index, size] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (open && (batch !== open.batch || index !== open.next)) {
      return `append #${open.batch} is partly stored: ${open.next - 1} of its ${open.size} messages (seqs ${open.firstSeq}–${open.firstSeq + open.next - 2}), then ${row.id} at seq ${row.seq}`;
    }
    if (!open) {
      if (index !== 1)
        return `append #${batch} is partly stored: its message ${index} of ${size} is at seq ${row.seq} without the ones before it`;
      open = { batch, next: 1, size, firstSeq: row.seq };
    }
    open.next++;
    if (open.next > open.size) open = null;
  }
  if (open)
    return `append #${open.batch} is partly stored: ${open.next - 1} of its ${open.size} messages (from seq ${open.firstSeq}), the rest missing`;
  return null;
}
