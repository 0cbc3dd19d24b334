import { InvalidArgumentError, PayloadTooLargeError } from '../errors.ts';
import type { MessagePart, ProviderOptions } from '../message-parts.ts';
import { assertPlainJson, isWellFormedText, snapshotInput } from '../store/json-boundary.ts';
import { isBase64, validateMessageParts } from '../store/message-parts-check.ts';

/** The user's message as the loop stores it: its text, and its parts when it has more than text. */
export interface UserMessage {
  content: string;
  parts?: MessagePart[];
}

const refuse = (argument: string, reason: string): never => {
  throw new InvalidArgumentError({ argument, reason });
};

function text(value: unknown, argument: string): string {
  if (typeof value !== 'string') refuse(argument, 'must be a string');
  if (!isWellFormedText(value as string))
    refuse(argument, 'is not well-formed UTF-16 (it holds a lone surrogate)');
  return value as string;
}

/** Bytes as base64, in chunks (a spread of millions of arguments would overflow the stack). */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const isUrlText = (value: string) => /^(https?|data):/i.test(value) && URL.canParse(value);

/**
 * Where a file's encoded size is judged before anything is encoded: the store's limit for one
 * message (a durable run), else only what a string can hold.
 */
export interface FileBudget {
  sessionId: string | null;
  /** Bytes of base64 a file may take. */
  limit: number;
}

/** Far below V8's longest string (~2^29 characters), past which `btoa` aborts the process. */
export const MAX_INLINE_FILE_BASE64 = 256 * 1024 * 1024;

/** `%XX` escapes as bytes, anything else as its UTF-8 (RFC 2397's data: URL body). */
function percentDecoded(body: string, argument: string): Uint8Array {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '%') {
      const byte = /^[0-9A-Fa-f]{2}$/.test(body.slice(i + 1, i + 3))
        ? Number.parseInt(body.slice(i + 1, i + 3), 16)
        : -1;
      if (byte < 0) refuse(argument, 'is a data: URL with a malformed % escape');
      bytes.push(byte);
      i += 2;
    } else {
      const point = body.codePointAt(i)!;
      bytes.push(...encoder.encode(String.fromCodePoint(point)));
      if (point > 0xffff) i++;
    }
  }
  return Uint8Array.from(bytes);
}

/** Bytes as base64, refused first when their base64 would be over the budget. */
function encodeWithin(bytes: Uint8Array, argument: string, mediaType: string, budget: FileBudget): string {
  const size = 4 * Math.ceil(bytes.length / 3);
  if (size > budget.limit) {
    const part = `${argument.replace(/\.data$/, '')} (file ${mediaType}, about ${size} bytes)`;
    if (budget.sessionId === null) {
      refuse(
        argument,
        `is ${bytes.length} bytes, too large to send inline (at most ${budget.limit} bytes of base64); send it by URL`,
      );
    }
    throw new PayloadTooLargeError({
      sessionId: budget.sessionId!,
      subject: 'message',
      messageId: null,
      size,
      limit: budget.limit,
      part,
    });
  }
  return toBase64(bytes);
}

/** A file's data, encoded once: base64 text is kept, bytes are encoded, a `data:` URL is unpacked. */
function fileSource(
  data: unknown,
  argument: string,
  mediaType: string,
  budget: FileBudget,
): { data: string } | { url: string } {
  if (data instanceof URL) return fileSource(data.href, argument, mediaType, budget);
  if (data instanceof ArrayBuffer)
    return { data: encodeWithin(new Uint8Array(data), argument, mediaType, budget) };
  if (ArrayBuffer.isView(data)) {
    const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return { data: encodeWithin(view, argument, mediaType, budget) };
  }
  if (typeof data !== 'string')
    return refuse(argument, 'must be base64 text, bytes (Uint8Array, ArrayBuffer) or a URL');
  if (/^data:/i.test(data)) {
    const comma = data.indexOf(',');
    if (comma < 0) refuse(argument, 'is a data: URL without a comma');
    const body = data.slice(comma + 1);
    if (/;base64$/i.test(data.slice(0, comma))) {
      if (!isBase64(body)) refuse(argument, 'is a data: URL whose base64 is malformed');
      return { data: body };
    }
    return { data: encodeWithin(percentDecoded(body, argument), argument, mediaType, budget) };
  }
  if (isUrlText(data)) return { url: data };
  if (!isBase64(data)) refuse(argument, 'must be base64 (RFC 4648, padded), an http(s) URL or a data: URL');
  return { data };
}

function providerOptions(value: unknown, argument: string): { providerOptions?: ProviderOptions } {
  if (value === undefined) return {};
  const copy = snapshotInput(value);
  assertPlainJson(copy, argument);
  return { providerOptions: copy as ProviderOptions };
}

function part(given: unknown, at: string, budget: FileBudget): MessagePart {
  if (typeof given !== 'object' || given === null) refuse(at, 'must be an object');
  // Each field is read once: what is checked is what is stored.
  const {
    type,
    text: body,
    mediaType,
    data,
    filename,
    providerOptions: options,
    ...rest
  } = given as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) refuse(`${at}.${extra}`, 'is not a field of a text or file part');
  if (type === 'text') {
    if (mediaType !== undefined || data !== undefined || filename !== undefined)
      refuse(at, 'a text part has only text');
    return {
      type: 'text',
      text: text(body, `${at}.text`),
      ...providerOptions(options, `${at}.providerOptions`),
    };
  }
  if (type !== 'file') return refuse(`${at}.type`, "must be 'text' or 'file'");
  if (body !== undefined) refuse(`${at}.text`, 'is not a field of a file part');
  const media = text(mediaType, `${at}.mediaType`);
  if (!/^[^/\s]+\/[^/\s]+$/.test(media)) refuse(`${at}.mediaType`, 'must be a media type such as image/png');
  return {
    type: 'file',
    mediaType: media,
    ...fileSource(data, `${at}.data`, media, budget),
    ...(filename !== undefined ? { filename: text(filename, `${at}.filename`) } : {}),
    ...providerOptions(options, `${at}.providerOptions`),
  };
}

/**
 * Text and file parts as `run({ message })` and `toModelOutput` give them, read once and encoded
 * once, then held to the same rules the store will apply (depth, size of the whole, provider
 * options), so what is accepted here is never refused by the append that follows.
 */
export function readContentParts(
  given: unknown,
  path: string,
  role: 'user' | 'tool',
  budget: FileBudget = { sessionId: null, limit: MAX_INLINE_FILE_BASE64 },
): MessagePart[] {
  if (!Array.isArray(given)) return refuse(path, 'must be an array of text and file parts');
  const parts: MessagePart[] = [];
  for (let i = 0; i < given.length; i++) {
    if (!Object.hasOwn(given, i)) refuse(`${path}[${i}]`, 'is a hole (a sparse array is not JSON)');
    parts.push(part(given[i], `${path}[${i}]`, budget));
  }
  validateMessageParts({ id: '-', role, content: '', parts, createdAt: '-' }, path, path);
  return parts;
}

/**
 * `run({ message })`: a string, or an array of text and file parts the way the AI SDK's user
 * content takes them. Read once and encoded once here, so what the model receives after a resume
 * is exactly what it received before the crash.
 */
export function readUserMessage(message: unknown, budget?: FileBudget): UserMessage {
  if (typeof message === 'string') return { content: text(message, 'message') };
  if (!Array.isArray(message))
    return refuse('message', 'must be a string or an array of text and file parts');
  if (message.length === 0) refuse('message', 'must hold at least one part');
  const parts = readContentParts(message, 'message', 'user', budget);
  const content = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const [only] = parts;
  const plain = parts.length === 1 && only?.type === 'text' && only.providerOptions === undefined;
  return plain ? { content } : { content, parts };
}
