import { InvalidArgumentError, PayloadTooLargeError } from './errors.ts';
import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from './lease-rules.ts';
import { type NewMessage, ROLES } from './records.ts';
import type { AppendInput, StoreLimits } from './store.ts';

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

export function validateSessionId(sessionId: unknown): asserts sessionId is string {
  if (!isString(sessionId) || sessionId.length === 0) {
    throw new InvalidArgumentError({ argument: 'sessionId', reason: 'must be a non-empty string' });
  }
  if (sessionId.includes('\u0000')) {
    throw new InvalidArgumentError({ argument: 'sessionId', reason: 'must not contain NUL characters' });
  }
  const bytes = utf8ByteLength(sessionId);
  if (bytes > MAX_SESSION_ID_BYTES) {
    throw new InvalidArgumentError({
      argument: 'sessionId',
      reason: `is ${bytes} bytes; the limit is ${MAX_SESSION_ID_BYTES}`,
    });
  }
}

function validateMessage(message: NewMessage, path: string): void {
  if (typeof message !== 'object' || message === null) {
    throw new InvalidArgumentError({ argument: path, reason: 'must be an object' });
  }
  if (!isString(message.id) || message.id.length === 0 || utf8ByteLength(message.id) > MAX_MESSAGE_ID_BYTES) {
    throw new InvalidArgumentError({
      argument: `${path}.id`,
      reason: `must be a non-empty string of at most ${MAX_MESSAGE_ID_BYTES} bytes`,
    });
  }
  if (!ROLES.includes(message.role)) {
    throw new InvalidArgumentError({
      argument: `${path}.role`,
      reason: `must be one of ${ROLES.join(', ')}`,
    });
  }
  if (!isString(message.content)) {
    throw new InvalidArgumentError({ argument: `${path}.content`, reason: 'must be a string' });
  }
  if (!isString(message.createdAt)) {
    throw new InvalidArgumentError({ argument: `${path}.createdAt`, reason: 'must be an ISO-8601 string' });
  }
  for (const key of ['toolCallId', 'toolName', 'kind'] as const) {
    if (message[key] !== undefined && !isString(message[key])) {
      throw new InvalidArgumentError({ argument: `${path}.${key}`, reason: 'must be a string when present' });
    }
  }
  if (message.toolCalls !== undefined) {
    if (!Array.isArray(message.toolCalls)) {
      throw new InvalidArgumentError({
        argument: `${path}.toolCalls`,
        reason: 'must be an array when present',
      });
    }
    message.toolCalls.forEach((call, i) => {
      if (!isString(call?.id) || call.id.length === 0 || !isString(call.name)) {
        throw new InvalidArgumentError({
          argument: `${path}.toolCalls[${i}]`,
          reason: 'needs a non-empty string id and a string name',
        });
      }
    });
  }
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
  if (!Number.isSafeInteger(input.expectedSeq) || input.expectedSeq < 0) {
    throw new InvalidArgumentError({ argument: 'expectedSeq', reason: 'must be a non-negative integer' });
  }
  if (!Array.isArray(input.messages) || input.messages.length === 0) {
    throw new InvalidArgumentError({ argument: 'messages', reason: 'must be a non-empty array' });
  }
  if (input.lease !== null) {
    const lease = input.lease;
    if (typeof lease !== 'object' || !isString(lease.holder) || !Number.isSafeInteger(lease.epoch)) {
      throw new InvalidArgumentError({
        argument: 'lease',
        reason: 'must be null or { holder: string, epoch: integer }',
      });
    }
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
  return input.messages.map((message, i) => {
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
      });
    }
    return json;
  });
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

/** `load` options: `afterSeq` must be a non-negative integer when given. */
export function validateLoadOptions(options: { afterSeq?: number } | undefined): void {
  const afterSeq = options?.afterSeq;
  if (afterSeq !== undefined && (!Number.isSafeInteger(afterSeq) || afterSeq < 0)) {
    throw new InvalidArgumentError({ argument: 'afterSeq', reason: 'must be a non-negative integer' });
  }
}
