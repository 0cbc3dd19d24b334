import { isAgentStoreError, ToolDurabilityError } from './errors.ts';
import { idempotencyKeyFor } from './idempotency.ts';
import type { NewMessage, ToolCall } from './records.ts';
import { type AnyTool, type ToolContext, validateWithSchema } from './tool.ts';
import { messageByteLength } from './validation.ts';

export interface CallScope {
  sessionId: string | null;
  ownerId: string | null;
  tenantId: string | null;
  /** Aborts on the caller's signal or a lost lease; handed to handlers as `ctx.signal`. */
  signal: AbortSignal;
  tools: Record<string, AnyTool>;
  newId: () => string;
  /** The store's `maxMessageBytes`: a larger result is replaced by an error rather than failing the step. */
  maxResultBytes: number;
}

export function resultMessage(scope: CallScope, call: ToolCall, content: unknown, kind?: string): NewMessage {
  const message: NewMessage = {
    id: scope.newId(),
    role: 'tool',
    content: JSON.stringify(content ?? null),
    toolCallId: call.id,
    toolName: call.name,
    ...(kind ? { kind } : {}),
    createdAt: new Date().toISOString(),
  };
  const size = messageByteLength(message);
  if (size <= scope.maxResultBytes) return message;
  // One oversized output must not sink the results of its neighbours, nor wedge the session.
  const error = `The output of tool ${call.name} is ${size} bytes, over the store's limit of ${scope.maxResultBytes}; it was not stored`;
  return { ...message, content: JSON.stringify({ error }), kind: 'tool-output-error' };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function runHandler(scope: CallScope, tool: AnyTool, call: ToolCall, input: unknown, ctx: ToolContext) {
  let output: unknown;
  try {
    output = await tool.handler(input, ctx);
  } catch (error) {
    // Aborted mid-handler: whether it took effect is unknown, so record nothing; the next run
    // resolves the call like any interrupted one.
    if (scope.signal.aborted) throw scope.signal.reason ?? error;
    return resultMessage(scope, call, { error: errorText(error) }, 'tool-error');
  }
  // A handler that finished is committed even if the run was cancelled meanwhile: its effect happened.
  try {
    if (tool.output) output = await validateWithSchema(tool.output, output, `Output of tool ${call.name}`);
    return resultMessage(scope, call, output);
  } catch (error) {
    const kind = isAgentStoreError(error, 'SCHEMA_VALIDATION') ? 'tool-output-error' : 'tool-error';
    return resultMessage(scope, call, { error: errorText(error) }, kind);
  }
}

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

function durabilityError(scope: CallScope, call: ToolCall): NewMessage {
  const durability = new ToolDurabilityError({
    sessionId: scope.sessionId ?? '',
    toolCallId: call.id,
    toolName: call.name,
  });
  const facts = {
    code: durability.code,
    message: durability.message,
    toolName: call.name,
    toolCallId: call.id,
  };
  return resultMessage(scope, call, { error: durability.name, ...facts }, 'tool-durability-error');
}

/**
 * Turns one tool call into its result message. `resumed` marks a call interrupted by a crash:
 * it goes to `reconcile`, is re-invoked only when `safeToRetry`, or gets a durability error.
 */
export async function settleToolCall(
  scope: CallScope,
  call: ToolCall,
  resumed: boolean,
): Promise<NewMessage> {
  const tool = scope.tools[call.name];
  // An interrupted call whose tool is gone or whose input no longer validates (a deploy between
  // crash and resume) may still have run: say so, never "it did not run".
  if (!tool) {
    if (resumed) return durabilityError(scope, call);
    return resultMessage(scope, call, { error: `Unknown tool ${JSON.stringify(call.name)}` }, 'tool-error');
  }
  let input: unknown;
  try {
    input = await validateWithSchema(tool.input, call.input, `Input of tool ${call.name}`);
  } catch (error) {
    if (resumed) return durabilityError(scope, call);
    return resultMessage(scope, call, { error: errorText(error) }, 'tool-input-error');
  }
  if (scope.signal.aborted) {
    // Cancelled before this call started. A fresh call provably did not run; say so. An
    // interrupted one stays open for the next run to resolve.
    if (resumed) throw scope.signal.reason;
    return resultMessage(
      scope,
      call,
      { error: 'The run was cancelled before this tool started; it did not run' },
      'tool-cancelled',
    );
  }
  const ctx = await toolContext(scope, call, resumed ? 2 : 1);
  if (!resumed) return runHandler(scope, tool, call, input, ctx);
  if (tool.reconcile) {
    const found = await tool.reconcile(input, ctx);
    if (found.happened) return resultMessage(scope, call, found.output);
    return runHandler(scope, tool, call, input, ctx);
  }
  if (tool.safeToRetry === true) return runHandler(scope, tool, call, input, ctx);
  return durabilityError(scope, call);
}
