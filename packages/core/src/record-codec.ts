import { CorruptRecordError } from './errors.ts';
import { type JsonValue, type MessageRecord, ROLES } from './records.ts';

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
