/**
 * For store authors: the validation boundary every store passes its input through, the lease
 * rules, the record codecs, and the SQLite dialect shared by the SQLite and D1 adapters.
 * Applications need none of this; they import `@agentstore/core`.
 * @module @agentstore/core/store
 */
export {
  appendLeaseMatches,
  canAcquireLease,
  expiryIso,
  isLeaseLive,
  ownerMatches,
  retryAfterMs,
} from '../lease-rules.ts';
export {
  decodeSessionColumns,
  decodeStoredMessage,
  decodeStoredState,
  leaseFromColumns,
  type SessionColumns,
} from '../record-codec.ts';
export {
  MAX_MESSAGE_ID_BYTES,
  MAX_SESSION_ID_BYTES,
  messageByteLength,
  utf8ByteLength,
  utf8ByteLengthPortable,
  validateAppendInput,
  validateLoadOptions,
  validateSessionId,
  validateTtlMs,
} from '../validation.ts';
export * from './sqlite-dialect.ts';
