import { ToolDurabilityError } from './errors.ts';
import { idempotencyKeyFor } from './idempotency.ts';
import type { NewMessage, ToolCall } from './records.ts';
import { type AnyTool, SchemaValidationError, type ToolContext, validateWithSchema } from './tool.ts';

export interface CallScope {
  sessionId: string | null;
  ownerId: string | null;
  tenantId: string | null;
  signal: AbortSignal;
  tools: Record<string, AnyTool>;
  newId: () => string;
}

export function resultMessage(scope: CallScope, call: ToolCall, content: unknown, kind?: string): NewMessage {
  return {
    id: scope.newId(),
    role: 'tool',
    content: JSON.stringify(content ?? null),
    toolCallId: call.id,
    toolName: call.name,
    ...(kind ? { kind } : {}),
    createdAt: new Date().toISOString(),
  };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function runHandler(scope: CallScope, tool: AnyTool, call: ToolCall, input: unknown, ctx: ToolContext) {
  let output: unknown;
  try {
    output = await tool.handler(input, ctx);
    if (tool.output) output = await validateWithSchema(tool.output, output, `Output of tool ${call.name}`);
    return resultMessage(scope, call, output);
  } catch (error) {
    // The run was aborted or lost its lease: record nothing, the next run resumes this call.
    if (scope.signal.aborted) throw scope.signal.reason ?? error;
    const kind = error instanceof SchemaValidationError ? 'tool-output-error' : 'tool-error';
    return resultMessage(scope, call, { error: errorText(error) }, kind);
  }
}

/**
 * Turns one tool call into its result message. `resumed` marks a call interrupted by a crash:
 * it goes to `reconcile`, is re-invoked only when `safeToRetry`, or gets a durability error.
 */
async function toolContext(scope: CallScope, call: ToolCall, attempt: number): Promise<ToolContext> {
  return {
    sessionId: scope.sessionId,
    toolCallId: call.id,
    idempotencyKey: await idempotencyKeyFor(scope.sessionId, call.id),
    attempt,
    signal: scope.signal,
    ownerId: scope.ownerId,
    tenantId: scope.tenantId,
  };
}

/** Whether a fresh call must wait for a human. Calls with invalid input never wait: they fail. */
export async function needsApproval(scope: CallScope, call: ToolCall): Promise<boolean> {
  const tool = scope.tools[call.name];
  if (!tool?.needsApproval) return false;
  if (tool.needsApproval === true) return true;
  const parsed = await tool.input['~standard'].validate(call.input);
  if (parsed.issues) return false;
  return (await tool.needsApproval(parsed.value, await toolContext(scope, call, 1))) === true;
}

export async function settleToolCall(
  scope: CallScope,
  call: ToolCall,
  resumed: boolean,
): Promise<NewMessage> {
  const tool = scope.tools[call.name];
  if (!tool)
    return resultMessage(scope, call, { error: `Unknown tool ${JSON.stringify(call.name)}` }, 'tool-error');
  const ctx = await toolContext(scope, call, resumed ? 2 : 1);
  let input: unknown;
  try {
    input = await validateWithSchema(tool.input, call.input, `Input of tool ${call.name}`);
  } catch (error) {
    return resultMessage(scope, call, { error: errorText(error) }, 'tool-input-error');
  }
  if (!resumed) return runHandler(scope, tool, call, input, ctx);
  if (tool.reconcile) {
    const found = await tool.reconcile(input, ctx);
    if (found.happened) return resultMessage(scope, call, found.output);
    return runHandler(scope, tool, call, input, ctx);
  }
  if (tool.safeToRetry === true) return runHandler(scope, tool, call, input, ctx);
  const durability = new ToolDurabilityError({
    sessionId: scope.sessionId ?? '',
    toolCallId: call.id,
    toolName: call.name,
  });
  return resultMessage(
    scope,
    call,
    {
      error: durability.name,
      code: durability.code,
      message: durability.message,
      toolName: call.name,
      toolCallId: call.id,
    },
    'tool-durability-error',
  );
}
