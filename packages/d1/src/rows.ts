import {
  decodeStoredMessage,
  decodeStoredState,
  type MessageRecord,
  type SessionRecord,
} from '@agentstore/core';

/** A row of `<prefix>sessions`, as D1 returns it. */
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

/** A row of `<prefix>messages`: `body` is the message's JSON without its seq. */
export interface MessageRow {
  seq: number;
  body: string;
}

export function decodeSession(row: SessionRow): SessionRecord {
  const state = decodeStoredState(row.id, row.state);
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
        : { holder: row.lease_holder, epoch: row.lease_epoch, expiresAt: row.lease_expires_at ?? '' },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  return decodeStoredMessage(sessionId, row.seq, row.body);
}
