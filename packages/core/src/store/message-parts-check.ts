import { InvalidArgumentError } from '../errors.ts';
import { MESSAGE_PART_TYPES, type MessagePart } from '../message-parts.ts';
import type { NewMessage, Role } from '../records.ts';
import { assertPlainJson } from './json-boundary.ts';
import { MAX_MESSAGE_ID_BYTES, validateIdentifier, validateObject, validateText } from './validation.ts';

const OPTIONS = 'providerOptions';
const FILE_SOURCE = ['data', 'url'] as const;
/** The fields each part type may carry; anything else is refused, so nothing is silently dropped. */
const PART_FIELDS: Record<MessagePart['type'], readonly string[]> = {
  text: ['type', 'text', OPTIONS],
  reasoning: ['type', 'text', OPTIONS],
  file: ['type', 'mediaType', ...FILE_SOURCE, 'filename', OPTIONS],
  'reasoning-file': ['type', 'mediaType', ...FILE_SOURCE, OPTIONS],
  'tool-call': ['type', 'toolCallId', OPTIONS],
  'provider-tool-call': ['type', 'toolCallId', 'toolName', 'input', OPTIONS],
  'provider-tool-result': ['type', 'toolCallId', 'toolName', 'result', 'isError', OPTIONS],
  source: ['type', 'source', OPTIONS],
  custom: ['type', 'kind', OPTIONS],
};
/** Which part types a message of each role may hold (the AI SDK's `ModelMessage` rules). */
const ALLOWED: Record<Role, ReadonlySet<MessagePart['type']>> = {
  system: new Set(['text']),
  user: new Set(['text', 'file']),
  assistant: new Set(MESSAGE_PART_TYPES),
  tool: new Set(['text', 'file']),
};
const USAGE_COUNTS = [
  'inputTokens',
  'outputTokens',
  'reasoningTokens',
  'cachedInputTokens',
  'cacheWriteTokens',
];
const USAGE_FIELDS = [...USAGE_COUNTS, 'modelId', 'responseId'];
/** Base64's alphabet by char code (a regular expression overflows the stack on a file of megabytes). */
const ALPHABET = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')
  ALPHABET[c.charCodeAt(0)] = 1;

const refuse = (argument: string, reason: string): never => {
  throw new InvalidArgumentError({ argument, reason });
};

/** Base64 as RFC 4648 writes it (no line breaks, padded): what every provider accepts back. */
export function isBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  // Up to two '=' at the very end, nothing else outside the alphabet.
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  for (let i = 0; i < text.length - padding; i++) if (ALPHABET[text.charCodeAt(i)] !== 1) return false;
  return true;
}

function checkFileSource(part: Record<string, unknown>, path: string): void {
  const given = FILE_SOURCE.filter((key) => part[key] !== undefined);
  if (given.length !== 1) refuse(path, 'must have exactly one of data (base64) and url');
  if (part.data !== undefined) {
    validateText(part.data, `${path}.data`);
    if (!isBase64(part.data as string))
      refuse(`${path}.data`, 'must be base64 (RFC 4648, padded, no line breaks)');
  } else {
    validateText(part.url, `${path}.url`);
    if (!URL.canParse(part.url as string)) refuse(`${path}.url`, 'must be an absolute URL');
  }
  validateText(part.mediaType, `${path}.mediaType`);
  if (!/^[^/\s]+\/[^/\s]+$/.test(part.mediaType as string))
    refuse(`${path}.mediaType`, 'must be a media type such as image/png');
}

/**
 * An object whose keys are the provider's (a provider's options, a source): any keys, checked as
 * a whole by `assertPlainJson`. Only its being an object is checked here, in one step, whatever
 * its width.
 */
function openObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(path, 'must be an object');
  return value as Record<string, unknown>;
}

function checkPart(value: unknown, path: string, role: Role, callIds: Map<string, number>): void {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !MESSAGE_PART_TYPES.includes(type as MessagePart['type'])) {
    refuse(`${path}.type`, `must be one of ${MESSAGE_PART_TYPES.join(', ')}`);
  }
  const kind = type as MessagePart['type'];
  const part = validateObject(value, path, PART_FIELDS[kind]);
  if (!ALLOWED[role].has(kind)) refuse(`${path}.type`, `a ${role} message cannot hold a ${kind} part`);
  if (part[OPTIONS] !== undefined) {
    const options = openObject(part[OPTIONS], `${path}.${OPTIONS}`);
    for (const provider of Object.keys(options))
      openObject(options[provider], `${path}.${OPTIONS}.${provider}`);
  }
  switch (kind) {
    case 'text':
    case 'reasoning':
      validateText(part.text, `${path}.text`);
      return;
    case 'file':
      checkFileSource(part, path);
      if (part.filename !== undefined) validateText(part.filename, `${path}.filename`);
      return;
    case 'reasoning-file':
      checkFileSource(part, path);
      return;
    case 'tool-call': {
      const id = part.toolCallId;
      const seen = typeof id === 'string' ? callIds.get(id) : undefined;
      if (seen === undefined)
        refuse(`${path}.toolCallId`, "must be the id of one of the message's toolCalls");
      if (seen! > 0) refuse(`${path}.toolCallId`, 'names a call that already has a part');
      callIds.set(id as string, 1);
      return;
    }
    case 'provider-tool-call':
    case 'provider-tool-result':
      validateIdentifier(part.toolCallId, `${path}.toolCallId`, MAX_MESSAGE_ID_BYTES, { allowNul: true });
      validateText(part.toolName, `${path}.toolName`);
      if (part.isError !== undefined && typeof part.isError !== 'boolean')
        refuse(`${path}.isError`, 'must be a boolean');
      return;
    case 'source':
      openObject(part.source, `${path}.source`);
      return;
    case 'custom':
      validateText(part.kind, `${path}.kind`);
      return;
  }
}

/**
 * A message's `parts`: plain JSON, each part of a known type with only its documented fields,
 * allowed for the message's role; every one of the message's tool calls has exactly one
 * `tool-call` part, so the order the provider gave is complete.
 */
export function validateMessageParts(message: NewMessage, path: string, partsPath = `${path}.parts`): void {
  const { parts } = message;
  if (!Array.isArray(parts)) refuse(partsPath, 'must be an array when present');
  assertPlainJson(parts, partsPath);
  const callIds = new Map((message.toolCalls ?? []).map((call) => [call.id, 0]));
  for (let i = 0; i < parts!.length; i++) checkPart(parts![i], `${partsPath}[${i}]`, message.role, callIds);
  for (const [id, count] of callIds) {
    if (count === 0) refuse(partsPath, `has no tool-call part for the call ${JSON.stringify(id)}`);
  }
}

/** A model call's usage: token counts are non-negative integers; only assistant messages carry it. */
export function validateMessageUsage(message: NewMessage, path: string): void {
  if (message.role !== 'assistant') refuse(`${path}.usage`, 'is kept on assistant messages only');
  const usage = validateObject(message.usage, `${path}.usage`, USAGE_FIELDS);
  for (const key of USAGE_COUNTS) {
    const count = usage[key];
    if (count === undefined && (key === 'inputTokens' || key === 'outputTokens'))
      refuse(`${path}.usage.${key}`, 'is required');
    if (count !== undefined && (!Number.isSafeInteger(count) || (count as number) < 0)) {
      refuse(`${path}.usage.${key}`, 'must be a non-negative integer');
    }
  }
  for (const key of ['modelId', 'responseId'])
    if (usage[key] !== undefined) validateText(usage[key], `${path}.usage.${key}`);
}

/** The largest of a message's parts, described for a size error; `undefined` without parts. */
export function largestPart(message: NewMessage): string | undefined {
  let largest: { index: number; bytes: number } | undefined;
  (message.parts ?? []).forEach((part, index) => {
    const bytes = JSON.stringify(part).length;
    if (largest === undefined || bytes > largest.bytes) largest = { index, bytes };
  });
  if (largest === undefined) return undefined;
  const part = message.parts![largest.index]!;
  const media = 'mediaType' in part ? ` ${part.mediaType}` : '';
  return `parts[${largest.index}] (${part.type}${media}, about ${largest.bytes} bytes)`;
}
