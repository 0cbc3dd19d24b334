/**
 * For store authors: the validation boundary every store passes its input through, the lease
 * rules and the record codecs. (The SQLite dialect the SQLite and D1 adapters share lives in
 * `@agentstore/sqlite-dialect`.)
 * Applications need none of this; they import `@agentstore/core`.
 * @module @agentstore/core/store
 */

export { COMBINED_FILTER_INDEXES } from './combined-filter-indexes.ts';
export {
  type DefinedStore,
  type DefineStoreOptions,
  defineStore,
  type StoreImplementation,
} from './define-store.ts';
export { newIncarnationId } from './incarnation.ts';
export {
  assertPlainJson,
  isPlainJson,
  isWellFormedText,
  MAX_JSON_DEPTH,
  MAX_JSON_NODES,
  snapshotInput,
} from './json-boundary.ts';
export {
  appendLeaseMatches,
  canAcquireLease,
  expiryIso,
  isLeaseLive,
  leaseSafetyMarginMs,
  MAX_LEASE_TTL_MS,
  MIN_LEASE_TTL_MS,
  ownerMatches,
  processClockMs,
  retryAfterMs,
} from './lease-rules.ts';
export { mapStoreErrors } from './map-store-errors.ts';
export {
  decodeSessionColumns,
  decodeStoredMessage,
  decodeStoredState,
  leaseFromColumns,
  type SessionColumns,
} from './record-codec.ts';
export {
  decodeRetentionCursor,
  encodeRetentionCursor,
  MAX_RETENTION_BATCH,
  parseRetentionCursor,
  type RetentionRequest,
  validateRetentionInput,
} from './retention.ts';
export { compareSessionIds } from './session-id-order.ts';
export {
  MAX_IDENTITY_BYTES,
  MAX_MESSAGE_ID_BYTES,
  MAX_SESSION_ID_BYTES,
  MAX_STATE_BYTES,
  messageByteLength,
  utf8ByteLength,
  utf8ByteLengthPortable,
  validateAcquireLeaseInput,
  validateAppendInput,
  validateIdentifier,
  validateLeaseToken,
  validateListSessionsInput,
  validateLoadOptions,
  validateReleaseLeaseInput,
  validateRenewLeaseInput,
  validateSessionId,
  validateSessionInit,
  validateState,
  validateTtlMs,
} from './validation.ts';
