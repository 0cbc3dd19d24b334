/**
 * Every error agentstore throws on purpose, and `isAgentStoreError` to recognise one by its `code`.
 * The classes live in `errors/` by subject; this module is the one place to import them from.
 */
import type {
  AppendOutcomeUnknownError,
  ApprovalRequiredError,
  InvalidApprovalError,
  InvalidArgumentError,
  InvalidModelReplyError,
  SchemaMissingError,
  SchemaValidationError,
  ToolDurabilityError,
} from './errors/run-errors.ts';
import type {
  CorruptRecordError,
  LeaseLostError,
  MemoryStoreNotDurableError,
  PayloadTooLargeError,
  SchemaVersionError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  SessionNotFoundError,
  StoreConfigurationError,
  UnexpectedReplyError,
} from './errors/store-errors.ts';

export { AgentStoreError } from './errors/base.ts';
export {
  AppendOutcomeUnknownError,
  ApprovalRequiredError,
  InvalidApprovalError,
  InvalidArgumentError,
  InvalidModelReplyError,
  SchemaMissingError,
  SchemaValidationError,
  ToolDurabilityError,
} from './errors/run-errors.ts';
export {
  CorruptRecordError,
  LeaseLostError,
  MemoryStoreNotDurableError,
  PayloadTooLargeError,
  SchemaVersionError,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  SessionNotFoundError,
  StoreConfigurationError,
  UnexpectedReplyError,
} from './errors/store-errors.ts';

/** Every error class agentstore throws, keyed by its literal `code`. */
export interface AgentStoreErrorsByCode {
  SEQ_CONFLICT: SeqConflictError;
  LEASE_LOST: LeaseLostError;
  SESSION_BUSY: SessionBusyError;
  SESSION_NOT_FOUND: SessionNotFoundError;
  SESSION_ACCESS_DENIED: SessionAccessDeniedError;
  MEMORY_STORE_NOT_DURABLE: MemoryStoreNotDurableError;
  PAYLOAD_TOO_LARGE: PayloadTooLargeError;
  CORRUPT_RECORD: CorruptRecordError;
  TOOL_DURABILITY: ToolDurabilityError;
  APPEND_OUTCOME_UNKNOWN: AppendOutcomeUnknownError;
  INVALID_ARGUMENT: InvalidArgumentError;
  INVALID_MODEL_REPLY: InvalidModelReplyError;
  APPROVAL_REQUIRED: ApprovalRequiredError;
  INVALID_APPROVAL: InvalidApprovalError;
  SCHEMA_VALIDATION: SchemaValidationError;
  SCHEMA_MISSING: SchemaMissingError;
  STORE_CONFIGURATION: StoreConfigurationError;
  UNEXPECTED_REPLY: UnexpectedReplyError;
  SCHEMA_VERSION_UNSUPPORTED: SchemaVersionError;
}

export type AgentStoreErrorCode = keyof AgentStoreErrorsByCode;

/**
 * Recognises an agentstore error by its `code`, never by `instanceof`: an app with two installed
 * copies of `@agentstore/core` (an adapter built against another version) gets the same answer.
 * With no codes, any agentstore error matches; with several, any one of them.
 */
export function isAgentStoreError<C extends AgentStoreErrorCode>(
  error: unknown,
  ...codes: C[]
): error is AgentStoreErrorsByCode[C] {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !(error instanceof Error || 'message' in error)) return false;
  if (codes.length === 0) return KNOWN_CODES.has(code);
  return (codes as string[]).includes(code);
}

const KNOWN_CODES: ReadonlySet<string> = new Set<AgentStoreErrorCode>([
  'SEQ_CONFLICT',
  'LEASE_LOST',
  'SESSION_BUSY',
  'SESSION_NOT_FOUND',
  'SESSION_ACCESS_DENIED',
  'MEMORY_STORE_NOT_DURABLE',
  'PAYLOAD_TOO_LARGE',
  'CORRUPT_RECORD',
  'TOOL_DURABILITY',
  'APPEND_OUTCOME_UNKNOWN',
  'INVALID_ARGUMENT',
  'INVALID_MODEL_REPLY',
  'APPROVAL_REQUIRED',
  'INVALID_APPROVAL',
  'SCHEMA_VALIDATION',
  'SCHEMA_MISSING',
  'STORE_CONFIGURATION',
  'UNEXPECTED_REPLY',
  'SCHEMA_VERSION_UNSUPPORTED',
]);
