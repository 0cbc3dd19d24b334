import { isAgentStoreError, ToolDurabilityError } from '../errors.ts';
import type { MessagePart } from '../message-parts.ts';
import type { NewMessage, ResultOrigin, ToolCall } from '../records.ts';
import { assertPlainJson } from '../store/json-boundary.ts';
import { messageByteLength } from '../store/validation.ts';
import { type AnyTool, type ToolContext, validateWithSchema } from '../tool.ts';
import { readContentParts } from './content-input.ts';
import { idempotencyKeyFor } from './idempotency.ts';

export interface CallScope {
  sessionId: string | null;
  /** The session's `incarnationId` (null: none recorded, or no session): part of every idempotency key. */
  incarnationId?: string | null;
  ownerId: string | null;
  tenantId: string | null;
  /** Aborts on the caller's signal or a lost lease; handed to handlers as `ctx.signal`. */
  signal: AbortSignal;
  tools: Record<string, AnyTool>;
  newId: () => string;
  /**
   * The most one result may weigh (the store's `maxMessageBytes`, or its per-append budget if
   * smaller): a larger result is replaced by an error rather than failing the step.
   */
  maxResultBytes: number;
}

/** An error's text for a stored result; an error whose message (or toString) throws still gets one. */
export function errorText(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return 'an error whose message could not be read';
  }
}

/**
 * The agent's tool of that name: own keys only, so a model calling `constructor`, `toString` or
 * `__proto__` gets "Unknown tool", not a crash on what Object.prototype holds under that name.
 */
const toolNamed = (scope: CallScope, name: string): AnyTool | undefined =>
  Object.hasOwn(scope.tools, name) ? scope.tools[name] : undefined;

const ran = (origin: ResultOrigin) => origin.via === 'handler' || origin.via === 'reconciled';

/**
 * The tool message for `call`. Its content is `output` as JSON when `output` is plain JSON (the
 * store boundary's rule) and fits the store; otherwise an error saying why, so an effect that
 * happened is always recorded as settled, never left open or failing the run. That error keeps
 * `kind` when one was given (an input error too big to store is still a `tool-input-error`, a
 * durability error still says the call may have run); a plain output becomes a `tool-output-error`.
 */
export function resultMessage(
  scope: CallScope,
  call: ToolCall,
  output: unknown,
  origin: ResultOrigin,
  kind?: string,
  parts?: MessagePart[],
): NewMessage {
  const message = (
    content: string,
    resultKind: string | undefined,
    withParts?: MessagePart[],
  ): NewMessage => ({
    id: scope.newId(),
    role: 'tool',
    content,
    toolCallId: call.id,
    toolName: call.name,
    ...(resultKind ? { kind: resultKind } : {}),
    origin,
    ...(withParts ? { parts: withParts } : {}),
    createdAt: new Date().toISOString(),
  });
  // The fallback must always fit, or the call could never be answered: a tool name is model
  // output bounded only by the assistant message, so it is clipped in the text, and dropped from
  // `toolName` (the assistant message still names the call) when even that is too big.
  const unstored = (why: string) => {
    const name = call.name.length > 200 ? `${call.name.slice(0, 200)}…` : call.name;
    const what = ran(origin) ? `Tool ${name} ran, but its output` : `The result of tool ${name}`;
    const fallback = message(
      JSON.stringify({ error: `${what} ${why}; it was not stored` }),
      kind ?? 'tool-output-error',
    );
    if (messageByteLength(fallback) <= scope.maxResultBytes) return fallback;
    const { toolName: _omitted, ...withoutName } = fallback;
    return withoutName;
  };
  const value = output === undefined ? null : output;
  let json: string | undefined;
  try {
    assertPlainJson(value, 'output');
    // Serialised once, here: a hidden toJSON, a Proxy or a getter can still make this differ
    // from what was checked (even undefined), and content must be the text actually stored.
    json = JSON.stringify(value) as string | undefined;
  } catch (error) {
    return unstored(`cannot be stored as JSON (${errorText(error)})`);
  }
  if (typeof json !== 'string') return unstored('cannot be stored as JSON (it serialises to nothing)');
  const result = message(json, kind, parts);
  const size = messageByteLength(result);
  if (size <= scope.maxResultBytes) return result;
  // One oversized output must not sink the results of its neighbours, nor wedge the session.
  return unstored(`is ${size} bytes, over the store's limit of ${scope.maxResultBytes}`);
}

/** Checks an output that exists (returned by the handler or found by `reconcile`) and records it. */
async function outputMessage(
  scope: CallScope,
  tool: AnyTool,
  call: ToolCall,
  output: unknown,
  origin: ResultOrigin,
) {
  try {
    const checked = tool.output
      ? await validateWithSchema(tool.output, output, `Output of tool ${call.name}`)
      : output;
    let parts: MessagePart[] | undefined;
    try {
      if (tool.toModelOutput)
        parts = readContentParts(await tool.toModelOutput(checked), `toModelOutput(${call.name})`, 'tool');
    } catch (error) {
      // The effect happened: what failed is only how the output is shown to the model.
      return resultMessage(scope, call, { error: errorText(error) }, origin, 'tool-output-error');
    }
    return resultMessage(scope, call, checked, origin, undefined, parts);
  } catch (error) {
    const kind = isAgentStoreError(error, 'SCHEMA_VALIDATION') ? 'tool-output-error' : 'tool-error';
    return resultMessage(scope, call, { error: errorText(error) }, origin, kind);
  }
}

async function runHandler(scope: CallScope, tool: AnyTool, call: ToolCall, input: unknown, ctx: ToolContext) {
  // Read before the handler runs: it may change its ctx.
  const origin: ResultOrigin = { via: 'handler', attempt: ctx.attempt };
  let output: unknown;
  try {
    output = await tool.handler(input, ctx);
  } catch (error) {
    // Aborted mid-handler: whether it took effect is unknown, so record nothing; the next run
    // resolves the call like any orphaned one.
    if (scope.signal.aborted) throw scope.signal.reason ?? error;
    return resultMessage(scope, call, { error: errorText(error) }, origin, 'tool-error');
  }
  // A handler that finished is committed even if the run was cancelled meanwhile: its effect happened.
  return outputMessage(scope, tool, call, output, origin);
}

async function toolContext(scope: CallScope, call: ToolCall, attempt: number): Promise<ToolContext> {
  return {
    sessionId: scope.sessionId,
    toolCallId: call.id,
    idempotencyKey: await idempotencyKeyFor(scope.sessionId, call.id, scope.incarnationId ?? null),
    attempt,
    signal: scope.signal,
    ownerId: scope.ownerId,
    tenantId: scope.tenantId,
  };
}

/**
 * The call's input as the tool's schema makes it, from a copy of its own: the stored input is
 * also the session record, the model's view and `RunResult.messages`, so a schema or a handler
 * that mutates what it is given (z.any(), z.looseObject, a `meta: z.any()` field) must never
 * reach it. Each piece of user code that gets an input gets a fresh copy.
 */
const validatedInput = (tool: AnyTool, call: ToolCall) =>
  validateWithSchema(tool.input, structuredClone(call.input), `Input of tool ${call.name}`);

/** Whether a fresh call must wait for a human. Calls with invalid input never wait: they fail. */
export async function needsApproval(scope: CallScope, call: ToolCall): Promise<boolean> {
  const tool = toolNamed(scope, call.name);
  if (!tool?.needsApproval) return false;
  if (tool.needsApproval === true) return true;
  const parsed = await tool.input['~standard'].validate(structuredClone(call.input));
  if (parsed.issues) return false;
  return (await tool.needsApproval(parsed.value, await toolContext(scope, call, 1))) === true;
}

const NEVER_RAN: ResultOrigin = { via: 'invalid-call', attempt: 0 };

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
  return resultMessage(
    scope,
    call,
    { error: durability.name, ...facts },
    { via: 'durability-error', attempt: 0 },
    'tool-durability-error',
  );
}

/** A fresh call made ready to run: its tool, its validated input and its context; or the result that answers it without running. */
export type PreparedCall = { tool: AnyTool; input: unknown; ctx: ToolContext } | { result: NewMessage };

/**
 * Readies a fresh call (never run before): the input validated from a copy, the handler's
 * context (its idempotency key hashed). The loop does this while write #1 is in flight, off the
 * step's critical path; it runs the schema, never the handler (which waits for write #1, as
 * `needsApproval` already runs before it). Settles with a result instead when the call cannot run.
 */
export async function prepareFreshCall(scope: CallScope, call: ToolCall): Promise<PreparedCall> {
  const tool = toolNamed(scope, call.name);
  if (!tool) {
    const unknown = { error: `Unknown tool ${JSON.stringify(call.name)}` };
    return { result: resultMessage(scope, call, unknown, NEVER_RAN, 'tool-error') };
  }
  let input: unknown;
  try {
    input = await validatedInput(tool, call);
  } catch (error) {
    return { result: resultMessage(scope, call, { error: errorText(error) }, NEVER_RAN, 'tool-input-error') };
  }
  return { tool, input, ctx: await toolContext(scope, call, 1) };
}

/** Runs a prepared fresh call's handler, unless the run was cancelled before it started. */
export async function runPreparedCall(
  scope: CallScope,
  call: ToolCall,
  prepared: PreparedCall,
): Promise<NewMessage> {
  if ('result' in prepared) return prepared.result;
  if (scope.signal.aborted) {
    // Cancelled before this call started: it provably did not run; say so.
    return resultMessage(
      scope,
      call,
      { error: 'The run was cancelled before this tool started; it did not run' },
      { via: 'cancelled', attempt: 0 },
      'tool-cancelled',
    );
  }
  return runHandler(scope, prepared.tool, call, prepared.input, prepared.ctx);
}

/**
 * Turns one tool call into its result message. `resumed` marks an orphaned call (a crash cut it short):
 * it goes to `reconcile`, is re-invoked only when `safeToRetry`, or gets a durability error.
 */
export async function answerToolCall(
  scope: CallScope,
  call: ToolCall,
  resumed: boolean,
): Promise<NewMessage> {
  if (!resumed) return runPreparedCall(scope, call, await prepareFreshCall(scope, call));
  const tool = toolNamed(scope, call.name);
  // An orphaned call whose tool is gone or whose input no longer validates (a deploy between
  // crash and resume) may still have run: say so, never "it did not run".
  if (!tool) return durabilityError(scope, call);
  let input: unknown;
  try {
    input = await validatedInput(tool, call);
  } catch {
    return durabilityError(scope, call);
  }
  // An orphaned call stays open for the next run to resolve when this one was cancelled.
  if (scope.signal.aborted) throw scope.signal.reason;
  const attempt = 2;
  // Each piece of user code gets its own context object too: reconcile cannot change the handler's.
  const ctx = await toolContext(scope, call, attempt);
  if (tool.reconcile) {
    // A throw leaves the call open for the next run to ask again: nothing ran here.
    const found: unknown = await tool.reconcile(input, ctx);
    const happened = (found as { happened?: unknown } | null)?.happened;
    // A malformed answer cannot tell whether the effect happened: say exactly that.
    if (typeof happened !== 'boolean') return durabilityError(scope, call);
    if (happened) {
      const output = (found as { output?: unknown }).output;
      return outputMessage(scope, tool, call, output, { via: 'reconciled', attempt });
    }
    let fresh: unknown;
    try {
      fresh = await validatedInput(tool, call);
    } catch {
      // It validated a moment ago; a schema that now refuses cannot say whether the call ran.
      return durabilityError(scope, call);
    }
    return runHandler(scope, tool, call, fresh, await toolContext(scope, call, attempt));
  }
  if (tool.safeToRetry === true) return runHandler(scope, tool, call, input, ctx);
  return durabilityError(scope, call);
}
