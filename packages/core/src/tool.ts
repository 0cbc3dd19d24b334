import type { StandardSchemaV1 } from '@standard-schema/spec';
import { SchemaValidationError } from './errors.ts';
import type { UserContentInput } from './message-parts.ts';

/** What a handler learns about the call it serves. */
export interface ToolContext {
  sessionId: string | null;
  toolCallId: string;
  /**
   * Derived from session and tool-call id: identical on every re-invocation of this call.
   * Pass it to Stripe-style APIs so the downstream service dedupes.
   */
  idempotencyKey: string;
  /**
   * 1 on the first invocation; 2 on any re-invocation after a crash, however many runs were
   * cut short before: it says an earlier attempt may have run, not how many did (nothing is
   * written when a handler starts, so no count exists). Use `idempotencyKey` to make repeats safe.
   */
  attempt: number;
  signal: AbortSignal;
  ownerId: string | null;
  tenantId: string | null;
}

/** What `reconcile` learned from the outside world about an orphaned call. */
export type ReconcileResult<Output> = { happened: true; output: Output } | { happened: false };

export interface ToolConfig<Input extends StandardSchemaV1, Output> {
  description: string;
  input: Input;
  output?: StandardSchemaV1<Output>;
  handler: (input: StandardSchemaV1.InferOutput<Input>, ctx: ToolContext) => Promise<Output> | Output;
  /**
   * Ask a human first: the run commits the call, returns `status: 'awaiting-approval'`, and a
   * later `run({ approvals })` (any process, any time) runs or rejects it.
   */
  needsApproval?:
    | boolean
    | ((input: StandardSchemaV1.InferOutput<Input>, ctx: ToolContext) => boolean | Promise<boolean>);
  /** Re-invoke the handler when a crash orphaned it. Only for tools with no side effect. */
  safeToRetry?: boolean;
  /**
   * Asks the outside world whether an orphaned call took effect. `happened: false` runs
   * the handler again (with the same idempotency key); `happened: true` records `output`.
   */
  reconcile?: (
    input: StandardSchemaV1.InferOutput<Input>,
    ctx: ToolContext,
  ) => Promise<ReconcileResult<Output>> | ReconcileResult<Output>;
  /**
   * What the model sees of an output that is more than JSON: text and files (a screenshot, a
   * chart), in the shape `run({ message })` takes. The output itself is still stored as the
   * result's content (what `reconcile`, `foldSession` and people read); these parts are stored
   * with it and are what an adapter that knows parts sends the model.
   */
  toModelOutput?(output: Output): UserContentInput[] | Promise<UserContentInput[]>;
}

export interface ToolDefinition<Input extends StandardSchemaV1 = StandardSchemaV1, Output = unknown>
  extends ToolConfig<Input, Output> {
  readonly kind: 'agentstore-tool';
}

// biome-ignore lint/suspicious/noExplicitAny: tools of any schema live in one record
export type AnyTool = ToolDefinition<any, any>;

/** Declares a tool; the handler's input type is inferred from the `input` schema. */
export function tool<Input extends StandardSchemaV1, Output>(
  config: ToolConfig<Input, Output>,
): ToolDefinition<Input, Output> {
  return { ...config, kind: 'agentstore-tool' };
}

export async function validateWithSchema<Schema extends StandardSchemaV1>(
  schema: Schema,
  value: unknown,
  what: string,
): Promise<StandardSchemaV1.InferOutput<Schema>> {
  const result = await schema['~standard'].validate(value);
  if (result.issues) throw new SchemaValidationError(what, result.issues);
  return result.value as StandardSchemaV1.InferOutput<Schema>;
}
