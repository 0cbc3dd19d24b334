import type { Lease, MessageRecord } from '@agentstore/core';
import { decodeSessionColumns, decodeStoredMessage, type SessionColumns } from '@agentstore/core/store';

/** `bigint` columns arrive as strings from pg; they are converted with Number (seqs stay far below 2^53). */
type Int8 = string | number;

export type SessionRow = SessionColumns;

/** A lease from its columns (the stored epoch, the expiry), for guard rows that carry them. */
export function leaseOf(holder: string | null, epoch: Int8, expiresAt: string | null): Lease | null {
  return holder === null ? null : { holder, epoch: Number(epoch), expiresAt: expiresAt ?? '' };
}

export const decodeSession = decodeSessionColumns;

/** The stored body is the message's JSON as appended; seq lives in its own column. */
export function decodeMessage(body: string, sessionId: string, seq: number): MessageRecord {
  return decodeStoredMessage(sessionId, seq, body);
}
