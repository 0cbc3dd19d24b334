import { CorruptRecordError, type JsonValue, type MessageRecord, type SessionRecord } from '@agentstore/core';

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
  let state: JsonValue;
  try {
    state = JSON.parse(row.state) as JsonValue;
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId: row.id, seq: null, reason: 'state is not valid JSON' },
      { cause: error },
    );
  }
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.message);
  } catch (error) {
    throw new CorruptRecordError({ sessionId, seq: row.seq, reason: 'invalid JSON' }, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CorruptRecordError({ sessionId, seq: row.seq, reason: 'not a JSON object' });
  }
  const message = parsed as MessageRecord;
  message.seq = row.seq;
  return message;
}
