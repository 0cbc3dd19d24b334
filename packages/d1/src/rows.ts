import {
  CorruptRecordError,
  type JsonValue,
  type MessageRecord,
  ROLES,
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
  let state: JsonValue;
  try {
    state = JSON.parse(row.state) as JsonValue;
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId: row.id, seq: null, reason: 'state is not valid JSON' },
      { cause: error },
    );
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
        : { holder: row.lease_holder, epoch: row.lease_epoch, expiresAt: row.lease_expires_at ?? '' },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function decodeMessage(sessionId: string, row: MessageRow): MessageRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.body);
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId, seq: row.seq, reason: 'body is not valid JSON' },
      { cause: error },
    );
  }
  if (!isMessageShaped(parsed)) {
    throw new CorruptRecordError({ sessionId, seq: row.seq, reason: 'body is not a message object' });
  }
  return { ...parsed, seq: row.seq };
}

function isMessageShaped(value: unknown): value is Omit<MessageRecord, 'seq'> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m.id === 'string' &&
    ROLES.includes(m.role as MessageRecord['role']) &&
    typeof m.content === 'string' &&
    typeof m.createdAt === 'string'
  );
}
