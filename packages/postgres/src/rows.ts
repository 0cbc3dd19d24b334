import {
  decodeStoredMessage,
  decodeStoredState,
  type Lease,
  type MessageRecord,
  type SessionRecord,
} from '@agentstore/core';

/** `bigint` columns arrive as strings from pg; they are converted with Number (seqs stay far below 2^53). */
type Int8 = string | number;

export interface SessionRow {
  id: string;
  agent_name: string;
  owner_id: string | null;
  tenant_id: string | null;
  state: string;
  head_seq: Int8;
  lease_holder: string | null;
  lease_epoch: Int8;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function leaseOf(holder: string | null, epoch: Int8, expiresAt: string | null): Lease | null {
  return holder === null ? null : { holder, epoch: Number(epoch), expiresAt: expiresAt ?? '' };
}

export function decodeSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    agentName: row.agent_name,
    ownerId: row.owner_id,
    tenantId: row.tenant_id,
    state: decodeStoredState(row.id, row.state),
    headSeq: Number(row.head_seq),
    lease: leaseOf(row.lease_holder, row.lease_epoch, row.lease_expires_at),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The stored body is the message's JSON as appended; seq lives in its own column. */
export function decodeMessage(body: string, sessionId: string, seq: number): MessageRecord {
  return decodeStoredMessage(sessionId, seq, body);
}
