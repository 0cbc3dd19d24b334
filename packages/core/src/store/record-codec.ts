import { CorruptRecordError } from '../errors.ts';
import { type JsonValue, type Lease, type MessageRecord, ROLES, type SessionRecord } from '../records.ts';

/**
 * For adapters that store a message as the JSON text `validateAppendInput` returned: parses it
 * and checks its shape, so every store reports an undecodable row the same way — a
 * `CorruptRecordError` naming session and seq, never a crash or a silent skip. `seq` comes from
 * the row's key; a `seq` inside the JSON must agree with it.
 */
export function decodeStoredMessage(sessionId: string, seq: number, json: string): MessageRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId, seq, reason: 'the message is not valid JSON' },
      { cause: error },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CorruptRecordError({ sessionId, seq, reason: 'the message is not a JSON object' });
  }
  const m = parsed as Partial<MessageRecord>;
  if (
    typeof m.id !== 'string' ||
    !ROLES.includes(m.role as MessageRecord['role']) ||
    typeof m.content !== 'string' ||
    typeof m.createdAt !== 'string'
  ) {
    throw new CorruptRecordError({
      sessionId,
      seq,
      reason: 'the message lacks a valid id, role, content or createdAt',
    });
  }
  if (m.seq !== undefined && m.seq !== seq) {
    throw new CorruptRecordError({ sessionId, seq, reason: `the message says seq ${m.seq}` });
  }
  return { ...(m as MessageRecord), seq };
}

/** Parses a session's stored state JSON; undecodable state is a `CorruptRecordError` with seq null. */
export function decodeStoredState(sessionId: string, json: string): JsonValue {
  try {
    return JSON.parse(json) as JsonValue;
  } catch (error) {
    throw new CorruptRecordError(
      { sessionId, seq: null, reason: 'the session state is not valid JSON' },
      { cause: error },
    );
  }
}

/**
 * A session row in the column layout every SQL adapter uses (snake_case columns, state as JSON
 * text). Integer columns may arrive as strings (pg's `bigint`) and are converted with Number.
 */
export interface SessionColumns {
  id: string;
  agent_name: string;
  owner_id: string | null;
  tenant_id: string | null;
  state: string;
  head_seq: number | string;
  lease_holder: string | null;
  lease_epoch: number | string;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Null on rows written before the column existed. */
  incarnation_id?: string | null;
}

/** A held lease from its columns; a holder without an expiry is a corrupt session row. */
export function leaseFromColumns(
  sessionId: string,
  holder: string | null,
  epoch: number | string,
  expiresAt: string | null,
): Lease | null {
  if (holder === null) return null;
  if (expiresAt === null)
    throw new CorruptRecordError({ sessionId, seq: null, reason: 'the lease has no expiry' });
  return { holder, epoch: Number(epoch), expiresAt };
}

/** Decodes a `SessionColumns` row into the record; bad state or lease is a `CorruptRecordError`. */
export function decodeSessionColumns(row: SessionColumns): SessionRecord {
  return {
    id: row.id,
    agentName: row.agent_name,
    ownerId: row.owner_id,
    tenantId: row.tenant_id,
    state: decodeStoredState(row.id, row.state),
    headSeq: Number(row.head_seq),
    lease: leaseFromColumns(row.id, row.lease_holder, row.lease_epoch, row.lease_expires_at),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(typeof row.incarnation_id === 'string' ? { incarnationId: row.incarnation_id } : {}),
  };
}
