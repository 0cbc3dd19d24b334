/**
 * The AgentStore contract, typed errors and the crash-safe run loop.
 * @module @agentstore/core
 */
export { type AgentConfig, type AgentDefinition, defineAgent } from './agent.ts';
export type { ApprovalDecision, PendingApproval } from './approvals.ts';
export * from './errors.ts';
export { idempotencyKeyFor } from './idempotency.ts';
export {
  appendLeaseMatches,
  canAcquireLease,
  expiryIso,
  isLeaseLive,
  ownerMatches,
  retryAfterMs,
} from './lease-rules.ts';
export type { LlmAdapter, LlmMessage, LlmResponse, LlmToolSpec, Usage } from './llm.ts';
export { mapStoreErrors } from './map-store-errors.ts';
export { createInMemoryStore, type MemoryStoreOptions, memoryStore } from './memory-store.ts';
export {
  decodeSessionColumns,
  decodeStoredMessage,
  decodeStoredState,
  leaseFromColumns,
  type SessionColumns,
} from './record-codec.ts';
export type {
  JsonValue,
  Lease,
  MessageRecord,
  NewMessage,
  Role,
  SessionRecord,
  ToolCall,
} from './records.ts';
export { ROLES } from './records.ts';
export {
  decodeRetentionCursor,
  encodeRetentionCursor,
  MAX_RETENTION_BATCH,
  type RetentionRequest,
  validateRetentionInput,
} from './retention.ts';
export { type RunOptions, type RunResult, run } from './run.ts';
export { type LoadResultAt, loadSessionAt, type SessionAsOf } from './session-at.ts';
export {
  APPROVAL_DECIDED,
  APPROVAL_REQUESTED,
  type ApprovalDecisionRecord,
  type FoldedSession,
  foldSession,
} from './session-fold.ts';
export type {
  AcquireLeaseInput,
  AgentStore,
  AppendInput,
  DeleteIdleSessionsInput,
  DeleteIdleSessionsResult,
  LeaseToken,
  ListSessionsInput,
  ListSessionsResult,
  LoadOptions,
  LoadResult,
  SessionInit,
  StoreLimits,
} from './store.ts';
export { describeOrigin, renderTimeline } from './timeline.ts';
export {
  type AnyTool,
  type ReconcileResult,
  SchemaValidationError,
  type ToolConfig,
  type ToolContext,
  type ToolDefinition,
  tool,
} from './tool.ts';
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
} from './validation.ts';
