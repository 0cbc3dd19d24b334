import { InvalidModelReplyError, isAgentStoreError } from '../errors.ts';
import type { Usage } from '../llm.ts';
import type { JsonValue, NewMessage, ResultOrigin, ToolCall } from '../records.ts';
import type { StoreLimits } from '../store/contract.ts';
import {
  assertPlainJson,
  isWellFormedText,
  snapshotInput,
  toWellFormedText,
} from '../store/json-boundary.ts';
import { largestPart, validateMessageParts } from '../store/message-parts-check.ts';
import { messageByteLength, utf8ByteLength } from '../store/validation.ts';
import { fitsOneAppend } from './message-ledger.ts';
import { callUsage, readReplyParts, richFields } from './reply-parts.ts';
import type { ToolCallIds } from './tool-call-ids.ts';
import { type CallScope, errorText, resultMessage } from './tool-results.ts';

/** One model reply as the loop stores it. */
export interface ModelStep {
  /** The assistant message: the reply's text and every call it made. */
  assistant: NewMessage;
  /** The calls that may run (or wait for a human). */
  calls: ToolCall[];
  /**
   * A `tool-input-error` result for each call that cannot run, stored in the same append as
   * `assistant`: such a call is never open, so no resume can run it.
   */
  inputErrors: NewMessage[];
}

const NEVER_RAN: ResultOrigin = { via: 'invalid-call', attempt: 0 };

const clip = (name: string) => (name.length > 200 ? `${name.slice(0, 200)}…` : name);
/** A reason's middle (a long path) is cut, keeping its start and what was wrong at the end. */
const clipReason = (why: string) => (why.length > 1_000 ? `${why.slice(0, 600)}…${why.slice(-300)}` : why);

const unlimited = (limits: StoreLimits) =>
  limits.maxMessageBytes === Number.POSITIVE_INFINITY &&
  limits.maxMessagesPerAppend === Number.POSITIVE_INFINITY &&
  limits.maxAppendBytes === undefined;

/**
 * Turns a model reply into what write #1 stores. The reply is paid for and the store boundary
 * would refuse parts of it, which would fail the step after the model call, and every resume
 * that gets the same reply. So: a lone surrogate in the text becomes U+FFFD (what a UTF-8 store
 * makes of it anyway); a call whose input is not plain JSON, whose tool name is not well-formed,
 * or whose input is too big for one stored message, is stored with input `null` and answered with
 * a `tool-input-error` naming what was wrong, so the model can call again. What cannot be stored
 * that way (the adapter broke the `LlmResponse` shape, or the text alone is over the limit) is an
 * `InvalidModelReplyError` carrying the reply.
 */
export function modelStep(
  reply: unknown,
  options: {
    scope: CallScope;
    ids: ToolCallIds;
    limits: StoreLimits;
    assistantId: string;
    /** The run's token count so far, this reply included: carried by a refusal. */
    usage?: Usage;
  },
): ModelStep {
  const { scope, ids, limits, assistantId, usage } = options;
  const refuse = (field: string, reason: string): never => {
    throw new InvalidModelReplyError({ field, reason, reply, ...(usage ? { usage } : {}) });
  };
  if (typeof reply !== 'object' || reply === null) refuse('reply', 'is not an object');
  const { text: rawText, toolCalls: rawCalls } = reply as { text?: unknown; toolCalls?: unknown };
  if (rawText !== undefined && rawText !== null && typeof rawText !== 'string') {
    refuse('text', `must be a string (got ${typeof rawText})`);
  }
  const text = toWellFormedText((rawText as string | null | undefined) ?? '');
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
    refuse('toolCalls', 'must be an array');
  }
  const given = (rawCalls ?? []) as unknown[];
  const replyParts = readReplyParts((reply as { parts?: unknown }).parts, given.length, text, refuse);
  const usageRecord = callUsage(reply as { usage?: unknown; modelId?: unknown; responseId?: unknown });

  /** Why the call at an index cannot run. */
  const broken = new Map<number, string>();
  const calls: { id?: string; name: string; input: JsonValue }[] = [];
  /** Each stored input's size as JSON, when the store has limits to fit. */
  const inputBytes: number[] = [];
  const sized = !unlimited(limits);
  for (let i = 0; i < given.length; i++) {
    const call: unknown = given[i];
    if (typeof call !== 'object' || call === null) refuse(`toolCalls[${i}]`, 'must be an object');
    const { id, name, input: liveInput } = call as { id?: unknown; name?: unknown; input?: unknown };
    if (typeof name !== 'string') refuse(`toolCalls[${i}].name`, `must be a string (got ${typeof name})`);
    const storedName = toWellFormedText(name as string);
    // The input is read once, here: the copy is what is checked, sized, stored, shown to the
    // model and handed to the handler, so a getter or Proxy answering differently on each read
    // (or throwing on the second) cannot make them differ. A failure is a broken call, not the run's.
    let input: JsonValue = null;
    if (!isWellFormedText(name as string)) {
      broken.set(i, 'its tool name is not well-formed UTF-16 (it holds a lone surrogate)');
    } else {
      try {
        const copy = snapshotInput(liveInput);
        assertPlainJson(copy, 'input');
        input = copy as JsonValue;
      } catch (error) {
        broken.set(i, `its input is not plain JSON (${errorText(error).replace(/^Invalid /, '')})`);
      }
    }
    inputBytes.push(0);
    if (sized && !broken.has(i)) {
      try {
        inputBytes[i] = utf8ByteLength(JSON.stringify(input));
      } catch (error) {
        // (Plain JSON always serialises, unless it is longer than a string can be.)
        broken.set(i, `its input cannot be serialised (${errorText(error)})`);
        input = null;
      }
    }
    calls.push({
      ...(typeof id === 'string' ? { id } : {}),
      name: storedName,
      input,
    });
  }
  const assigned = ids.assign(calls, assistantId);

  const build = (): ModelStep => {
    const stored = assigned.map((call, i) => (broken.has(i) ? { ...call, input: null } : call));
    const { content, ...rich } = richFields(replyParts, stored, usageRecord);
    const assistant: NewMessage = {
      id: assistantId,
      role: 'assistant',
      content: content ?? text,
      ...(stored.length ? { toolCalls: stored } : {}),
      ...rich,
      createdAt: new Date().toISOString(),
    };
    const inputErrors = [...broken].map(([i, why]) =>
      resultMessage(
        scope,
        stored[i]!,
        {
          // (The reason names a path, whose keys are model output too: clipped like the name.)
          error: `Tool ${JSON.stringify(clip(stored[i]!.name))} did not run: ${clipReason(why)}. Call it again with valid input.`,
        },
        NEVER_RAN,
        'tool-input-error',
      ),
    );
    return { assistant, calls: stored.filter((_, i) => !broken.has(i)), inputErrors };
  };

  let step = build();
  // Parts the store would refuse fail here, naming the reply's field, not at the append.
  if (step.assistant.parts !== undefined) {
    try {
      validateMessageParts(step.assistant, 'reply');
    } catch (error) {
      if (!isAgentStoreError(error, 'INVALID_ARGUMENT')) throw error;
      refuse(
        error.argument.replace(/^reply\./, ''),
        error.message.slice(`Invalid ${error.argument}: `.length),
      );
    }
  }
  if (!sized) return step;
  const fits = () =>
    messageByteLength(step.assistant) <= limits.maxMessageBytes &&
    fitsOneAppend([step.assistant, ...step.inputErrors], limits);
  while (!fits()) {
    // Each dropped input adds a result to the assistant's append; past the count limit, stop.
    if (step.inputErrors.length + 2 > limits.maxMessagesPerAppend) {
      refuse(
        'toolCalls',
        `has more calls that cannot run than one append holds with the reply (${limits.maxMessagesPerAppend} messages)`,
      );
    }
    // Drop the biggest input still stored; `null` is the smallest a call can be.
    let biggest = -1;
    for (let i = 0; i < assigned.length; i++) {
      if (!broken.has(i) && inputBytes[i]! > 4 && (biggest < 0 || inputBytes[i]! > inputBytes[biggest]!)) {
        biggest = i;
      }
    }
    if (biggest < 0) {
      const size = messageByteLength(step.assistant);
      const part = largestPart(step.assistant);
      if (part !== undefined) {
        refuse(
          part.slice(0, part.indexOf(' ')),
          `makes the assistant message ${size} bytes, over what the store takes in one message or append ` +
            `(${Math.min(limits.maxMessageBytes, limits.maxAppendBytes ?? Number.POSITIVE_INFINITY)} bytes); its largest part: ${part}`,
        );
      }
      refuse(
        'text',
        `makes the assistant message ${size} bytes (the text alone is ${utf8ByteLength(text)}), ` +
          `over what the store takes in one message or append (${Math.min(limits.maxMessageBytes, limits.maxAppendBytes ?? Number.POSITIVE_INFINITY)} bytes)`,
      );
    }
    broken.set(
      biggest,
      `its input is ${inputBytes[biggest]} bytes of JSON, too big to store with the reply ` +
        `(the store takes ${limits.maxMessageBytes} bytes per message)`,
    );
    step = build();
  }
  return step;
}
