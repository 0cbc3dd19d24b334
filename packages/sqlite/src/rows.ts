import {
  decodeSessionColumns,
  decodeStoredMessage,
  type MessageRecord,
  type SessionColumns,
} from '@agentstore/core';

/** A row of the sessions table as better-sqlite3 returns it: core's SQL session layout. */
export type SessionRow = SessionColumns & { head_seq: number; lease_epoch: number };

/** A message row as `load` selects it. */
export interface MessageRow {
  seq: number;
  message: string;
}

export const decodeSession = decodeSessionColumns;

/** The stored JSON is the message as appended; `seq` comes from the key column. */
export function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  return decodeStoredMessage(sessionId, row.seq, row.message);
}
