import { CorruptRecordError, type JsonValue, type MessageRecord, type SessionRecord } from '@agentstore/core';
import { decodeStoredMessage } from '@agentstore/core/store';

/** HGETALL as a flat [field, value, …] array (what a Lua script returns) → field map. */
export function fieldsOf(flat: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  if (!Array.isArray(flat)) return fields;
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), String(flat[i + 1]));
  return fields;
}

const isInteger = (text: string | undefined): text is string => text !== undefined && /^-?\d+$/.test(text);

/** Decodes a session hash; anything malformed is a `CorruptRecordError` with seq null. */
export function decodeSession(sessionId: string, fields: Map<string, string>): SessionRecord {
  const corrupt = (reason: string, cause?: unknown): never => {
    throw new CorruptRecordError({ sessionId, seq: null, reason }, { cause });
  };
  const json = (name: string): JsonValue => {
    const text = fields.get(name);
    if (text === undefined) return corrupt(`field ${name} is missing`);
    try {
      return JSON.parse(text) as JsonValue;
    } catch (error) {
      return corrupt(`field ${name} is not JSON`, error);
    }
  };
  const string = (name: string): string => {
    const value = json(name);
    return typeof value === 'string' ? value : corrupt(`field ${name} is not a string`);
  };
  const nullableString = (name: string): string | null => {
    const value = json(name);
    return value === null || typeof value === 'string'
      ? value
      : corrupt(`field ${name} is not a string or null`);
  };

  const id = string('id');
  if (id !== sessionId) corrupt('stored id differs from the requested one');
  const headSeq = fields.get('headSeq');
  if (!isInteger(headSeq) || Number(headSeq) < 0) return corrupt('headSeq is not a non-negative integer');
  const createdAt = fields.get('createdAt');
  const updatedAt = fields.get('updatedAt');
  if (createdAt === undefined || updatedAt === undefined) return corrupt('timestamps are missing');

  let lease: SessionRecord['lease'] = null;
  if (fields.has('leaseHolder')) {
    const epoch = fields.get('leaseEpoch');
    const expiresMs = fields.get('leaseExpiresMs');
    if (!isInteger(epoch) || !isInteger(expiresMs)) return corrupt('lease epoch or expiry is not an integer');
    lease = {
      holder: string('leaseHolder'),
      epoch: Number(epoch),
      expiresAt: new Date(Number(expiresMs)).toISOString(),
    };
  }

  return {
    id,
    agentName: string('agentName'),
    ownerId: nullableString('ownerId'),
    tenantId: nullableString('tenantId'),
    state: json('state'),
    headSeq: Number(headSeq),
    lease,
    createdAt,
    updatedAt,
    // Plain text, set once at creation; absent on sessions created before it existed.
    ...(fields.has('incarnationId') ? { incarnationId: fields.get('incarnationId')! } : {}),
  };
}

/** Decodes one stored message; it must be a JSON object carrying the seq its position implies. */
export function decodeMessage(sessionId: string, seq: number, text: unknown): MessageRecord {
  return decodeStoredMessage(sessionId, seq, String(text));
}

export function encodeMessage(message: Omit<MessageRecord, 'seq'>, seq: number): string {
  return JSON.stringify({ ...message, seq });
}
