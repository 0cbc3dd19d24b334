import {
  CorruptRecordError,
  decodeStoredMessage,
  decodeStoredState,
  type MessageRecord,
  type SessionRecord,
} from '@agentstore/core';

/** A row of the sessions table as better-sqlite3 returns it. */
export interface SessionRow {
  id: string;
  agent_name: string;
  owner_id: string | null;
  tenant_id: string | null;
  state: string;
  head_seq: number;
  lease_holder: string | null;
  lease_epoch: number;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A message row as `load` selects it. */
export interface MessageRow {
  seq: number;
  message: string;
}

export function decodeSession(row: SessionRow): SessionRecord {
  const state = decodeStoredState(row.id, row.state);
  if (row.lease_holder !== null && row.lease_expires_at === null) {
    throw new CorruptRecordError({ sessionId: row.id, seq: null, reason: 'lease has no expiry' });
  }
  return {
    id: row.id,
    agentName: row.agent_name,
    ownerId: row.owner_id,
    tenantId: row.tenant_id,
    state,
    headSeq: row.head_seq,
    lease:
      row.lease_holder === null
        ? null
        : { holder: row.lease_holder, epoch: row.lease_epoch, expiresAt: row.lease_expires_at! },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The stored JSON is the message as appended; `seq` comes from the key column. */
export function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  return decodeStoredMessage(sessionId, row.seq, row.message);
}
