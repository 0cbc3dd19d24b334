import {
  decodeSessionColumns,
  decodeStoredMessage,
  type MessageRecord,
  type SessionColumns,
} from '@agentstore/core';

/** A row of `<prefix>sessions`, as D1 returns it: core's SQL session layout. */
export type SessionRow = SessionColumns & { head_seq: number; lease_epoch: number };

/** A row of `<prefix>messages`: `body` is the message's JSON without its seq. */
export interface MessageRow {
  seq: number;
  body: string;
}

export const decodeSession = decodeSessionColumns;

export function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  return decodeStoredMessage(sessionId, row.seq, row.body);
}
