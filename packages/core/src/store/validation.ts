import { InvalidArgumentError, PayloadTooLargeError } from '../errors.ts';
import {
  type JsonValue,
  type NewMessage,
  RESULT_ORIGINS,
  type ResultOrigin,
  ROLES,
  type Role,
} from '../records.ts';
import type {
  AcquireLeaseInput,
  AppendInput,
  LeaseToken,
  ListSessionsInput,
  SessionInit,
  StoreLimits,
} from './contract.ts';
import { assertPlainJson, isWellFormedText } from './json-boundary.ts';
import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from './lease-rules.ts';
import { largestPart, validateMessageParts, validateMessageUsage } from './message-parts-check.ts';

const APPEND_FIELDS = ['expectedSeq', 'messages', 'session', 'lease', 'releaseLease'] as const;

/** Session ids are stored verbatim; this bounds them so every backend can key on them. */
export const MAX_SESSION_ID_BYTES = 1024;
export const MAX_MESSAGE_ID_BYTES = 256;

// Node's Buffer.byteLength is native and ~20× faster than a JS loop; Workers may not have Buffer.
const nativeByteLength = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } })
  .Buffer;

/** UTF-8 length of `text` (lone surrogates count 3, as the encoder replaces them with U+FFFD). */
export function utf8ByteLength(text: string): number {
  if (nativeByteLength) return nativeByteLength.byteLength(text, 'utf8');
  return utf8ByteLengthPortable(text);
}

/** The same count without Buffer or TextEncoder allocations, for runtimes without Buffer. */
export function utf8ByteLengthPortable(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The size a store's `maxMessageBytes` limit is measured in: UTF-8 bytes of the message's JSON. */
export function messageByteLength(message: NewMessage): number {
  return utf8ByteLength(JSON.stringify(message));
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** owner, tenant, agent name and lease holder: stored verbatim and compared, so bounded like ids. */
export const MAX_IDENTITY_BYTES = 1024;
/** The session `state` as JSON; the tightest backend (a DynamoDB session item) still holds it. */
export const MAX_STATE_BYTES = 256 * 1024;

/**
 * A string the stores key on or compare: non-empty, well-formed UTF-16 (a lone surrogate would
 * alias on every UTF-8 backend), no NUL (refused by Postgres text), at most `maxBytes` of UTF-8.
 */
export function validateIdentifier(
  value: unknown,
  argument: string,
  maxBytes: number,
  options: { allowNul?: boolean } = {},
): asserts value is string {
  if (!isString(value) || value.length === 0) {
    throw new InvalidArgumentError({ argument, reason: 'must be a non-empty string' });
  }
  if (!isWellFormedText(value)) {
    throw new InvalidArgumentError({
      argument,
      reason:
        'is not well-formed UTF-16 (it holds a lone surrogate, which UTF-8 stores would turn into U+FFFD)',
    });
  }
  if (!options.allowNul && value.includes('\u0000')) {
    throw new InvalidArgumentError({ argument, reason: 'must not contain NUL characters' });
  }
  const bytes = utf8ByteLength(value);
  if (bytes > maxBytes) {
    throw new InvalidArgumentError({ argument, reason: `is ${bytes} bytes; the limit is ${maxBytes}` });
  }
}

export function validateSessionId(sessionId: unknown): asserts sessionId is string {
  validateIdentifier(sessionId, 'sessionId', MAX_SESSION_ID_BYTES);
}

const validateNullableIdentity = (value: unknown, argument: string) => {
  if (value !== null) validateIdentifier(value, argument, MAX_IDENTITY_BYTES);
};

/** A well-formed string of any length (content, timestamps): it must survive UTF-8 unchanged. */
export function validateText(value: unknown, argument: string): asserts value is string {
  if (!isString(value)) throw new InvalidArgumentError({ argument, reason: 'must be a string' });
  if (!isWellFormedText(value)) {
    throw new InvalidArgumentError({
      argument,
      reason: 'is not well-formed UTF-16 (it holds a lone surrogate)',
    });
  }
}

export function validateObject(
  value: unknown,
  argument: string,
  fields: readonly string[],
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError({ argument, reason: 'must be an object' });
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw new InvalidArgumentError({ argument, reason: 'must be a plain object' });
  }
  for (const key of Object.keys(value)) {
    if (!fields.includes(key)) {
      throw new InvalidArgumentError({
        argument: `${argument}.${key}`,
        reason: `is not a field here (allowed: ${fields.join(', ')})`,
      });
    }
  }
  return value as Record<string, unknown>;
}

/** A session `state`: plain JSON within `MAX_STATE_BYTES`. */
export function validateState(state: unknown, argument: string): asserts state is JsonValue {
  assertPlainJson(state, argument);
  const bytes = utf8ByteLength(JSON.stringify(state));
  if (bytes > MAX_STATE_BYTES) {
    throw new InvalidArgumentError({
      argument,
      reason: `is ${bytes} bytes of JSON; the limit is ${MAX_STATE_BYTES}`,
    });
  }
}

const INIT_FIELDS = ['agentName', 'ownerId', 'tenantId', 'state'] as const;

/** What a session is created with: agent name, owner and tenant (string or null), JSON state. */
export function validateSessionInit(init: unknown, argument = 'init'): asserts init is SessionInit {
  const fields = validateObject(init, argument, INIT_FIELDS);
  validateIdentifier(fields.agentName, `${argument}.agentName`, MAX_IDENTITY_BYTES);
  validateNullableIdentity(fields.ownerId, `${argument}.ownerId`);
  validateNullableIdentity(fields.tenantId, `${argument}.tenantId`);
  validateState(fields.state, `${argument}.state`);
}

/** A lease token as a writer presents it: a well-formed holder and an integer epoch. */
export function validateLeaseToken(token: unknown, argument: string): asserts token is LeaseToken {
  if (typeof token !== 'object' || token === null) {
    throw new InvalidArgumentError({ argument, reason: 'must be { holder: string, epoch: integer }' });
  }
  const { holder, epoch } = token as Partial<LeaseToken>;
  validateIdentifier(holder, `${argument}.holder`, MAX_IDENTITY_BYTES);
  if (!Number.isSafeInteger(epoch)) {
    throw new InvalidArgumentError({ argument: `${argument}.epoch`, reason: 'must be an integer' });
  }
}

const MESSAGE_FIELDS = [
  'id',
  'role',
  'content',
  'toolCalls',
  'toolCallId',
  'toolName',
  'kind',
  'origin',
  'parts',
  'usage',
  'createdAt',
] as const;
const TOOL_CALL_FIELDS = ['id', 'name', 'input'] as const;
const ORIGIN_FIELDS = ['via', 'attempt'] as const;

function validateOrigin(origin: unknown, path: string): void {
  const fields = validateObject(origin, path, ORIGIN_FIELDS);
  if (!RESULT_ORIGINS.includes(fields.via as ResultOrigin['via'])) {
    throw new InvalidArgumentError({
      argument: `${path}.via`,
      reason: `must be one of ${RESULT_ORIGINS.join(', ')}`,
    });
  }
  if (!Number.isSafeInteger(fields.attempt) || (fields.attempt as number) < 0) {
    throw new InvalidArgumentError({ argument: `${path}.attempt`, reason: 'must be a non-negative integer' });
  }
}

/** A `NewMessage`: only its documented fields, each of its documented type, plain JSON throughout. */
function validateMessage(message: unknown, path: string): asserts message is NewMessage {
  const m = validateObject(message, path, MESSAGE_FIELDS);
  // Message and tool-call ids live inside the message's JSON, where NUL is just a character.
  validateIdentifier(m.id, `${path}.id`, MAX_MESSAGE_ID_BYTES, { allowNul: true });
  if (!ROLES.includes(m.role as Role)) {
    throw new InvalidArgumentError({
      argument: `${path}.role`,
      reason: `must be one of ${ROLES.join(', ')}`,
    });
  }
  validateText(m.content, `${path}.content`);
  validateText(m.createdAt, `${path}.createdAt`);
  for (const key of ['toolCallId', 'toolName', 'kind'] as const) {
    if (m[key] !== undefined) validateText(m[key], `${path}.${key}`);
  }
  if (m.origin !== undefined) validateOrigin(m.origin, `${path}.origin`);
  if (m.toolCalls !== undefined) {
    if (!Array.isArray(m.toolCalls)) {
      throw new InvalidArgumentError({
        argument: `${path}.toolCalls`,
        reason: 'must be an array when present',
      });
    }
    const calls = m.toolCalls as unknown[];
    for (let i = 0; i < calls.length; i++) {
      const callPath = `${path}.toolCalls[${i}]`;
      if (!Object.hasOwn(calls, i)) {
        throw new InvalidArgumentError({
          argument: callPath,
          reason: 'is a hole (a sparse array is not JSON)',
        });
      }
      const call = validateObject(calls[i], callPath, TOOL_CALL_FIELDS);
      validateIdentifier(call.id, `${callPath}.id`, MAX_MESSAGE_ID_BYTES, { allowNul: true });
      validateText(call.name, `${callPath}.name`);
      assertPlainJson(call.input, `${callPath}.input`);
    }
  }
  if (m.parts !== undefined) validateMessageParts(message as NewMessage, path);
  if (m.usage !== undefined) validateMessageUsage(message as NewMessage, path);
}

/**
 * Checks an append before any write: shape, ids, lease token, and the store's limits.
 * Every adapter calls this first so bad input is rejected the same way everywhere.
 * Returns each message's JSON text (`JSON.stringify(message)`, what the size limit measured),
 * so adapters that store messages as JSON need not serialise them a second time.
 */
export function validateAppendInput(sessionId: string, input: AppendInput, limits: StoreLimits): string[] {
  validateSessionId(sessionId);
  if (typeof input !== 'object' || input === null) {
    throw new InvalidArgumentError({ argument: 'input', reason: 'must be an object' });
  }
  validateObject(input, 'input', APPEND_FIELDS);
  if (!Number.isSafeInteger(input.expectedSeq) || input.expectedSeq < 0) {
    throw new InvalidArgumentError({ argument: 'expectedSeq', reason: 'must be a non-negative integer' });
  }
  if (!Array.isArray(input.messages) || input.messages.length === 0) {
    throw new InvalidArgumentError({ argument: 'messages', reason: 'must be a non-empty array' });
  }
  if (input.lease !== null) validateLeaseToken(input.lease, 'lease');
  if (input.releaseLease !== undefined && typeof input.releaseLease !== 'boolean') {
    throw new InvalidArgumentError({ argument: 'releaseLease', reason: 'must be a boolean when present' });
  }
  if (input.session !== undefined) {
    const session = validateObject(input.session, 'session', ['state', 'init']);
    if (session.state !== undefined) validateState(session.state, 'session.state');
    if (session.init !== undefined) validateSessionInit(session.init, 'session.init');
  }
  if (input.messages.length > limits.maxMessagesPerAppend) {
    throw new PayloadTooLargeError({
      sessionId,
      subject: 'append',
      messageId: null,
      size: input.messages.length,
      limit: limits.maxMessagesPerAppend,
    });
  }
  const ids = new Set<string>();
  let total = 0;
  const encoded: string[] = [];
  // A for loop, not map(): map skips the holes of a sparse array.
  for (let i = 0; i < input.messages.length; i++) {
    const message = input.messages[i] as NewMessage;
    if (!Object.hasOwn(input.messages, i)) {
      throw new InvalidArgumentError({
        argument: `messages[${i}]`,
        reason: 'is a hole (a sparse array is not JSON)',
      });
    }
    validateMessage(message, `messages[${i}]`);
    if (ids.has(message.id)) {
      throw new InvalidArgumentError({
        argument: `messages[${i}].id`,
        reason: 'duplicates another id in this append',
      });
    }
    ids.add(message.id);
    const json = JSON.stringify(message);
    const size = utf8ByteLength(json);
    if (size > limits.maxMessageBytes) {
      throw new PayloadTooLargeError({
        sessionId,
        subject: 'message',
        messageId: message.id,
        size,
        limit: limits.maxMessageBytes,
        ...(message.parts ? { part: `messages[${i}].${largestPart(message)}` } : {}),
      });
    }
    total += size;
    encoded.push(json);
  }
  if (limits.maxAppendBytes !== undefined && total > limits.maxAppendBytes) {
    throw new PayloadTooLargeError({
      sessionId,
      subject: 'append',
      messageId: null,
      size: total,
      limit: limits.maxAppendBytes,
      unit: 'bytes',
    });
  }
  return encoded;
}

/** A lease TTL: an integer number of ms within [MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS]. */
export function validateTtlMs(ttlMs: unknown, argument = 'ttlMs'): asserts ttlMs is number {
  if (
    typeof ttlMs !== 'number' ||
    !Number.isSafeInteger(ttlMs) ||
    ttlMs < MIN_LEASE_TTL_MS ||
    ttlMs > MAX_LEASE_TTL_MS
  ) {
    throw new InvalidArgumentError({
      argument,
      reason: `must be an integer number of ms from ${MIN_LEASE_TTL_MS} to ${MAX_LEASE_TTL_MS} (24 h)`,
    });
  }
}

/** `acquireLease`: session id, holder, TTL and the init the session would be created from. */
export function validateAcquireLeaseInput(
  sessionId: unknown,
  input: unknown,
): asserts input is AcquireLeaseInput {
  validateSessionId(sessionId);
  const fields = validateObject(input, 'input', ['holder', 'ttlMs', 'init']);
  validateIdentifier(fields.holder, 'holder', MAX_IDENTITY_BYTES);
  validateTtlMs(fields.ttlMs);
  validateSessionInit(fields.init);
}

/** `renewLease`: session id, a well-formed token and a TTL. */
export function validateRenewLeaseInput(sessionId: unknown, input: unknown): void {
  validateSessionId(sessionId);
  validateLeaseToken(input, 'input');
  validateTtlMs((input as { ttlMs?: unknown }).ttlMs);
}

/** `releaseLease`: session id and a well-formed token (a token that matches nothing is `released: false`). */
export function validateReleaseLeaseInput(sessionId: unknown, input: unknown): void {
  validateSessionId(sessionId);
  validateLeaseToken(input, 'input');
}

/** `listSessions`: well-formed filters, a positive integer limit, a string cursor or null. */
export function validateListSessionsInput(input: unknown): asserts input is ListSessionsInput {
  const fields = validateObject(input, 'input', ['ownerId', 'tenantId', 'agentName', 'limit', 'cursor']);
  for (const key of ['ownerId', 'tenantId', 'agentName'] as const) {
    if (fields[key] !== undefined) validateIdentifier(fields[key], key, MAX_IDENTITY_BYTES);
  }
  if (!Number.isSafeInteger(fields.limit) || (fields.limit as number) < 1) {
    throw new InvalidArgumentError({ argument: 'limit', reason: 'must be a positive integer' });
  }
  if (fields.cursor !== undefined && fields.cursor !== null) {
    validateIdentifier(fields.cursor, 'cursor', MAX_SESSION_ID_BYTES);
  }
}

/** `load` options: absent, or an object whose `afterSeq` is a non-negative integer when given. */
export function validateLoadOptions(options: { afterSeq?: number } | undefined): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object when given' });
  }
  const afterSeq = options.afterSeq;
  if (afterSeq !== undefined && (!Number.isSafeInteger(afterSeq) || afterSeq < 0)) {
    throw new InvalidArgumentError({ argument: 'afterSeq', reason: 'must be a non-negative integer' });
  }
}
