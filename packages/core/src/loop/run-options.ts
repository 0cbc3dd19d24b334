import { InvalidArgumentError, PayloadTooLargeError } from '../errors.ts';
import type { NewMessage } from '../records.ts';
import type { StoreLimits } from '../store/contract.ts';
import { isWellFormedText } from '../store/json-boundary.ts';
import { largestPart } from '../store/message-parts-check.ts';
import {
  MAX_IDENTITY_BYTES,
  MAX_MESSAGE_ID_BYTES,
  messageByteLength,
  utf8ByteLength,
  validateIdentifier,
  validateSessionId,
  validateTtlMs,
} from '../store/validation.ts';
import { readUserMessage, type UserMessage } from './content-input.ts';
import { maxResultBytes } from './message-ledger.ts';
import { checkSignal, checkStoreShape } from './run-option-shapes.ts';

/** The longest `leaseWaitMs`: what a timer can wait (2^31 − 1 ms, ~24.8 days) without overflowing. */
export const MAX_LEASE_WAIT_MS = 2_147_483_647;

/** The options `checkRunOptions` looks at; `RunOptions` satisfies it. */
interface CheckedOptions {
  store?: { limits: StoreLimits } | undefined;
  sessionId?: string | undefined;
  message?: unknown;
  messageId?: string | undefined;
  llm?: unknown;
  ownerId?: string | null | undefined;
  tenantId?: string | null | undefined;
  leaseTtlMs?: number | undefined;
  leaseWaitMs?: number | undefined;
  approvals?: unknown;
  onBackgroundError?: unknown;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value));

function checkApprovals(
  approvals: unknown,
): asserts approvals is Record<string, { approve: boolean; reason?: string }> {
  if (!isPlainObject(approvals)) {
    throw new InvalidArgumentError({
      argument: 'approvals',
      reason: 'must be an object keyed by tool-call id',
    });
  }
  for (const [toolCallId, decision] of Object.entries(approvals)) {
    const path = `approvals[${JSON.stringify(toolCallId)}]`;
    validateIdentifier(toolCallId, `${path} (the tool-call id)`, MAX_MESSAGE_ID_BYTES);
    if (!isPlainObject(decision)) {
      throw new InvalidArgumentError({
        argument: path,
        reason: 'must be { approve: boolean, reason?: string }',
      });
    }
    for (const key of Object.keys(decision)) {
      if (key !== 'approve' && key !== 'reason') {
        throw new InvalidArgumentError({
          argument: `${path}.${key}`,
          reason: 'is not a field of a decision',
        });
      }
    }
    if (typeof decision.approve !== 'boolean') {
      throw new InvalidArgumentError({ argument: `${path}.approve`, reason: 'must be a boolean' });
    }
    const reason = decision.reason;
    if (reason !== undefined && (typeof reason !== 'string' || !isWellFormedText(reason))) {
      throw new InvalidArgumentError({ argument: `${path}.reason`, reason: 'must be a well-formed string' });
    }
  }
}

/**
 * Every input `run()` acts on, checked before it takes the lease or calls the model, so bad
 * input never costs a model call or a write. `agentName` is the name sessions are created with.
 */
/** Checks every option before anything is written or any model is called; returns the user's message as it will be stored. */
export function checkRunOptions(options: CheckedOptions, agentName: string): UserMessage | undefined {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object' });
  }
  const { sessionId, message, messageId } = options;
  checkStoreShape(options.store, sessionId !== undefined);
  checkSignal((options as { signal?: unknown }).signal);
  const limits: StoreLimits | undefined = options.store?.limits;
  if (typeof (options.llm as { generate?: unknown } | undefined)?.generate !== 'function') {
    throw new InvalidArgumentError({ argument: 'llm', reason: 'must have a generate() function' });
  }
  if (sessionId !== undefined) validateSessionId(sessionId);
  // A rejection and its result must land in one append (docs/durability.md): refuse a store
  // that cannot take two before the model is paid, not at the first rejection.
  if (limits !== undefined && sessionId !== undefined && !(limits.maxMessagesPerAppend >= 2)) {
    throw new InvalidArgumentError({
      argument: 'store.limits.maxMessagesPerAppend',
      reason: `is ${String(limits.maxMessagesPerAppend)}; run() needs at least 2`,
    });
  }
  if (options.store !== undefined && sessionId !== undefined)
    validateIdentifier(agentName, 'agent.name', MAX_IDENTITY_BYTES);
  for (const key of ['ownerId', 'tenantId'] as const) {
    const value = options[key];
    if (value !== undefined && value !== null) validateIdentifier(value, key, MAX_IDENTITY_BYTES);
  }
  if (messageId !== undefined) validateIdentifier(messageId, 'messageId', MAX_MESSAGE_ID_BYTES);
  // A durable run judges a file by the store's limit before encoding it (a huge upload is refused, not encoded).
  const budget =
    limits !== undefined && sessionId !== undefined
      ? { sessionId, limit: maxResultBytes(limits) }
      : undefined;
  const user = message === undefined ? undefined : readUserMessage(message, budget);
  if (user !== undefined && limits !== undefined && sessionId !== undefined) {
    checkMessageSize(limits, sessionId, user, messageId);
  }
  // validateTtlMs holds it to [MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS] (24 h): timer-safe.
  if (options.leaseTtlMs !== undefined) validateTtlMs(options.leaseTtlMs, 'leaseTtlMs');
  const wait: unknown = options.leaseWaitMs;
  if (
    wait !== undefined &&
    (typeof wait !== 'number' || !Number.isSafeInteger(wait) || wait < 0 || wait > MAX_LEASE_WAIT_MS)
  ) {
    throw new InvalidArgumentError({
      argument: 'leaseWaitMs',
      reason: `must be an integer from 0 to ${MAX_LEASE_WAIT_MS} (got ${String(wait)})`,
    });
  }
  if (options.onBackgroundError !== undefined && typeof options.onBackgroundError !== 'function') {
    throw new InvalidArgumentError({ argument: 'onBackgroundError', reason: 'must be a function' });
  }
  if (options.approvals !== undefined) {
    checkApprovals(options.approvals);
    if (limits !== undefined && sessionId !== undefined) checkReasonSizes(limits, options.approvals);
  }
  return user;
}

/** Room a decision record or a rejection result needs besides its reason (ids, names, times, keys). */
const DECISION_OVERHEAD_BYTES = 4_096;

/**
 * A rejection reason is stored twice — in the decision record and in the rejection result, which
 * land in one append — and inside JSON text that is itself a JSON string, so its escapes double.
 * Refused here when the pair could never be stored, rather than after the lease is taken.
 */
function checkReasonSizes(limits: StoreLimits, approvals: Record<string, { reason?: string }>): void {
  const perMessage = limits.maxMessageBytes - DECISION_OVERHEAD_BYTES;
  const perPair = (limits.maxAppendBytes ?? Number.POSITIVE_INFINITY) / 2 - DECISION_OVERHEAD_BYTES;
  const limit = Math.min(perMessage, perPair);
  for (const [toolCallId, decision] of Object.entries(approvals)) {
    if (decision.reason === undefined) continue;
    const stored = utf8ByteLength(JSON.stringify(JSON.stringify(decision.reason)));
    if (stored > limit) {
      throw new InvalidArgumentError({
        argument: `approvals[${JSON.stringify(toolCallId)}].reason`,
        reason: `takes ${stored} bytes as stored; this store can keep a reason of at most ${Math.max(0, limit)}`,
      });
    }
  }
}

/** The user's message as it will be stored must fit the store: refused before the model sees it. */
function checkMessageSize(
  limits: StoreLimits,
  sessionId: string,
  user: UserMessage,
  messageId?: string,
): void {
  // Without a messageId the loop assigns a random UUID: the same length as this one.
  const stored: NewMessage = {
    id: messageId ?? crypto.randomUUID(),
    role: 'user',
    ...user,
    createdAt: new Date().toISOString(),
  };
  const size = messageByteLength(stored);
  const limit = maxResultBytes(limits);
  if (size > limit) {
    const part = largestPart(stored);
    throw new PayloadTooLargeError({
      sessionId,
      subject: 'message',
      messageId: stored.id,
      size,
      limit,
      ...(part ? { part: part.replace(/^parts/, 'message') } : {}),
    });
  }
}
