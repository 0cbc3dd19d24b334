import { InvalidArgumentError } from '../errors.ts';
import type { MessagePart, ProviderOptions } from '../message-parts.ts';
import { assertPlainJson, isWellFormedText, snapshotInput } from '../store/json-boundary.ts';
import { isBase64 } from '../store/message-parts-check.ts';

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

/** A file's data, encoded once: base64 text is kept, bytes are encoded, a `data:` URL is unpacked. */
function fileSource(data: unknown, argument: string): { data: string } | { url: string } {
  if (data instanceof URL) return fileSource(data.href, argument);
  if (data instanceof ArrayBuffer) return { data: toBase64(new Uint8Array(data)) };
  if (ArrayBuffer.isView(data))
    return { data: toBase64(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)) };
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
    let decoded = '';
    try {
      decoded = decodeURIComponent(body);
    } catch {
      refuse(argument, 'is a data: URL that is not percent-encoded');
    }
    return { data: toBase64(new TextEncoder().encode(decoded)) };
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

function part(given: unknown, at: string): MessagePart {
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
    ...fileSource(data, `${at}.data`),
    ...(filename !== undefined ? { filename: text(filename, `${at}.filename`) } : {}),
    ...providerOptions(options, `${at}.providerOptions`),
  };
}

/** Text and file parts as `run({ message })` and `toModelOutput` give them, read once and encoded once. */
export function readContentParts(given: unknown, path: string): MessagePart[] {
  if (!Array.isArray(given)) return refuse(path, 'must be an array of text and file parts');
  const parts: MessagePart[] = [];
  for (let i = 0; i < given.length; i++) {
    if (!Object.hasOwn(given, i)) refuse(`${path}[${i}]`, 'is a hole (a sparse array is not JSON)');
    parts.push(part(given[i], `${path}[${i}]`));
  }
  return parts;
}

/**
 * `run({ message })`: a string, or an array of text and file parts the way the AI SDK's user
 * content takes them. Read once and encoded once here, so what the model receives after a resume
 * is exactly what it received before the crash.
 */
export function readUserMessage(message: unknown): UserMessage {
  if (typeof message === 'string') return { content: text(message, 'message') };
  if (!Array.isArray(message))
    return refuse('message', 'must be a string or an array of text and file parts');
  if (message.length === 0) refuse('message', 'must hold at least one part');
  const parts = readContentParts(message, 'message');
  const content = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const [only] = parts;
  const plain = parts.length === 1 && only?.type === 'text' && only.providerOptions === undefined;
  return plain ? { content } : { content, parts };
}
