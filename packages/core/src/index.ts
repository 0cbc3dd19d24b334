/**
 * The application API: `run()`, `tool()`, `defineAgent()`, typed errors (recognised by `code` with
 * `isAgentStoreError`), record and store types. Helpers for store authors (validators, lease
 * rules, codecs) are in `@agentstore/core/store`; test helpers in `@agentstore/core/testing`.
 * @module @agentstore/core
 */
export { type AgentConfig, type AgentDefinition, defineAgent } from './agent.ts';
export * from './errors.ts';
export { type LoadResultAt, loadSessionAt, type SessionAsOf } from './inspect/session-at.ts';
export {
  APPROVAL_DECIDED,
  APPROVAL_REQUESTED,
  type ApprovalDecisionRecord,
  type FoldedSession,
  foldSession,
} from './inspect/session-fold.ts';
export { describeOrigin, renderTimeline } from './inspect/timeline.ts';
export { type SessionUsage, type StepUsage, sessionUsage } from './inspect/usage.ts';
export type {
  LlmAdapter,
  LlmMessage,
  LlmResponse,
  LlmToolSpec,
  ReplyPart,
  ReplyToolCallPart,
  Usage,
} from './llm.ts';
export type { ApprovalDecision, PendingApproval } from './loop/approvals.ts';
export type { BackgroundErrorContext, BackgroundErrorHandler } from './loop/background-errors.ts';
export { idempotencyKeyFor } from './loop/idempotency.ts';
export { type RunOptions, type RunResult, run } from './loop/run.ts';
export { type MemoryStoreOptions, memoryStore } from './memory-store.ts';
export {
  type CustomPart,
  type FilePart,
  MESSAGE_PART_TYPES,
  type MessagePart,
  type ModelCallUsage,
  type ProviderOptions,
  type ProviderToolCallPart,
  type ProviderToolResultPart,
  type ReasoningFilePart,
  type ReasoningPart,
  type SourcePart,
  type TextPart,
  type ToolCallPart,
  type UserContentInput,
  type UserFileInput,
} from './message-parts.ts';
export type {
  JsonValue,
  Lease,
  MessageRecord,
  NewMessage,
  ResultOrigin,
  Role,
  SessionRecord,
  ToolCall,
} from './records.ts';
export { RESULT_ORIGINS, ROLES } from './records.ts';
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
} from './store/contract.ts';
/** The lease TTLs `run()` (`leaseTtlMs`) and every store accept. */
export { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from './store/lease-rules.ts';
export { MAX_RETENTION_BATCH } from './store/retention.ts';
export {
  type AnyTool,
  type ReconcileResult,
  type ToolConfig,
  type ToolContext,
  type ToolDefinition,
  tool,
} from './tool.ts';
