import type { ReplyPart } from '../llm.ts';
import type { MessagePart, ModelCallUsage } from '../message-parts.ts';
import type { NewMessage, ToolCall } from '../records.ts';
import { assertPlainJson, snapshotInput, toWellFormedText } from '../store/json-boundary.ts';

type Refuse = (field: string, reason: string) => never;

/**
 * Reads a reply's `parts` once (a getter or Proxy cannot answer differently later) and checks
 * what the store boundary cannot know: each of the reply's calls has exactly one `tool-call`
 * part. Text is made well-formed as the reply's `text` is; provider options are kept as given.
 */
export function readReplyParts(
  raw: unknown,
  callCount: number,
  text: string,
  refuse: Refuse,
): ReplyPart[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  let parts: unknown;
  try {
    parts = snapshotInput(raw);
  } catch (error) {
    return refuse('parts', `must be plain JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parts)) return refuse('parts', 'must be an array');
  // Text first made well-formed, as the reply's `text` is (a lone surrogate becomes U+FFFD, what
  // a UTF-8 store makes of it anyway), so the paid reply is not refused for it.
  for (const part of parts) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if ((p?.type === 'text' || p?.type === 'reasoning') && typeof p.text === 'string')
      p.text = toWellFormedText(p.text);
  }
  try {
    assertPlainJson(parts, 'parts');
  } catch (error) {
    return refuse('parts', `must be plain JSON (${(error as Error).message})`);
  }
  const placed = new Set<number>();
  let joined = '';
  parts.forEach((part: unknown, i) => {
    if (typeof part !== 'object' || part === null || Array.isArray(part))
      refuse(`parts[${i}]`, 'must be an object');
    const p = part as { type?: unknown; call?: unknown; text?: unknown };
    if (p.type === 'text' && typeof p.text === 'string') joined += p.text;
    if (p.type === 'tool-call') {
      const call = p.call;
      if (typeof call !== 'number' || !Number.isInteger(call) || call < 0 || call >= callCount) {
        refuse(`parts[${i}].call`, `must index the reply's toolCalls (0 to ${callCount - 1})`);
      }
      if (placed.has(call as number)) refuse(`parts[${i}].call`, `places call ${call} a second time`);
      placed.add(call as number);
    }
  });
  if (placed.size !== callCount)
    refuse('parts', `places ${placed.size} of the reply's ${callCount} tool calls`);
  // The stored content is the text parts joined; a reply whose parts leave out its text would
  // lose the answer without a word: an adapter bug, refused loudly.
  if (joined !== text) {
    refuse(
      'parts',
      `hold ${joined.length} characters of text where the reply's text has ${text.length}: the text parts, joined, must be the reply's text`,
    );
  }
  return parts as ReplyPart[];
}

/** The reply's parts as stored: each call placed by its assigned id. */
export function storedParts(parts: readonly ReplyPart[], calls: readonly ToolCall[]): MessagePart[] {
  return parts.map((part) => {
    if (part.type !== 'tool-call') return part;
    const { call, ...rest } = part;
    return { ...rest, toolCallId: calls[call]!.id };
  });
}

/** The text a message's parts say, for readers that only know `content`. */
export const textOf = (parts: readonly MessagePart[]): string =>
  parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * Whether `content` and `toolCalls` alone say everything the parts say (at most one text part,
 * first, then the calls in order, nothing attached): then the parts are not stored.
 */
export function saysNoMore(parts: readonly MessagePart[], calls: readonly ToolCall[]): boolean {
  let next = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.providerOptions !== undefined) return false;
    if (part.type === 'text' && i === 0) continue;
    if (part.type !== 'tool-call' || part.toolCallId !== calls[next]?.id) return false;
    next++;
  }
  return true;
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
const name = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? toWellFormedText(value) : undefined;

/** What the call used, as stored with its message; `undefined` when the adapter reported nothing. */
export function callUsage(reply: {
  usage?: unknown;
  modelId?: unknown;
  responseId?: unknown;
}): ModelCallUsage | undefined {
  const usage = (reply.usage ?? {}) as Record<string, unknown>;
  const record: ModelCallUsage = {
    inputTokens: count(usage.inputTokens) ?? 0,
    outputTokens: count(usage.outputTokens) ?? 0,
  };
  for (const key of ['reasoningTokens', 'cachedInputTokens', 'cacheWriteTokens'] as const) {
    const value = count(usage[key]);
    if (value !== undefined) record[key] = value;
  }
  const modelId = name(reply.modelId);
  const responseId = name(reply.responseId);
  if (modelId !== undefined) record.modelId = modelId;
  if (responseId !== undefined) record.responseId = responseId;
  const reported = reply.usage !== undefined && reply.usage !== null;
  return reported || modelId !== undefined || responseId !== undefined ? record : undefined;
}

/** The assistant message's fields that come from parts and usage. */
export function richFields(
  parts: readonly ReplyPart[] | undefined,
  calls: readonly ToolCall[],
  usage: ModelCallUsage | undefined,
): Pick<NewMessage, 'parts' | 'usage'> & { content?: string } {
  const fields: Pick<NewMessage, 'parts' | 'usage'> & { content?: string } = {};
  if (parts !== undefined) {
    const stored = storedParts(parts, calls);
    fields.content = textOf(stored);
    if (!saysNoMore(stored, calls)) fields.parts = stored;
  }
  if (usage !== undefined) fields.usage = usage;
  return fields;
}
