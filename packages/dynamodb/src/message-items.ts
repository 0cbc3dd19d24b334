import { createHash } from 'node:crypto';
import { CorruptRecordError, type MessageRecord, type NewMessage } from '@agentstore/core';
import { decodeStoredMessage } from '@agentstore/core/store';
import { A } from './attributes.ts';
import { chunkSk, messageSk, parseSk } from './keys.ts';
import { PIECE_BYTES } from './limits.ts';
import type { Item } from './session-item.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Upper bound of a number attribute's stored size (DynamoDB: ~1 byte per two digits, plus one). */
const NUMBER_BYTES = 21;

/** The `digest` of a chunked message: 128 bits of the SHA-256 of its JSON, as 22 characters. */
const messageDigest = (json: string) => createHash('sha256').update(json).digest('base64url').slice(0, 22);
/** Stored size of the `digest` attribute: its name and value. */
const DIGEST_BYTES = A.digest.length + 22;

/** The items one message is stored as, and their size as DynamoDB counts it (an upper bound). */
export interface EncodedMessage {
  items: Item[];
  bytes: number;
}

/** Cuts UTF-8 text into pieces of at most `max` bytes, never inside a character. */
export function splitUtf8(text: string, max: number): string[] {
  const bytes = encoder.encode(text);
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + max, bytes.length);
    // 0b10xxxxxx continues a character: step back to the byte that starts it.
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(decoder.decode(bytes.subarray(start, end)));
    start = end;
  }
  return pieces;
}

/**
 * A message is its JSON (exactly what `messageByteLength` measures) in one item, or, when that is
 * over one item's size, in a message item plus chunk items that sort right after it, all stamped
 * with the JSON's `digest`.
 */
export function encodeMessage(
  pk: string,
  pkBytes: number,
  seq: number,
  message: NewMessage,
  ttl: number | null,
): EncodedMessage {
  const json = JSON.stringify(message);
  const jsonBytes = Buffer.byteLength(json);
  const extra: Item = ttl === null ? {} : { [A.ttl]: { N: String(ttl) } };
  const overhead = 2 + pkBytes + 2 + 4 + (ttl === null ? 0 : 3 + NUMBER_BYTES);
  if (jsonBytes <= PIECE_BYTES) {
    const sk = messageSk(seq);
    return {
      items: [{ [A.pk]: { S: pk }, [A.sk]: { S: sk }, [A.body]: { S: json }, ...extra }],
      bytes: overhead + sk.length + jsonBytes,
    };
  }
  const pieces = splitUtf8(json, PIECE_BYTES);
  const digest = messageDigest(json);
  const items: Item[] = pieces.map((piece, index) => ({
    [A.pk]: { S: pk },
    [A.sk]: { S: index === 0 ? messageSk(seq) : chunkSk(seq, index) },
    [A.body]: { S: piece },
    [A.digest]: { S: digest },
    ...(index === 0 ? { [A.parts]: { N: String(pieces.length - 1) } } : {}),
    ...extra,
  }));
  const bytes =
    jsonBytes + pieces.length * (overhead + chunkSk(seq, 0).length + DIGEST_BYTES) + 5 + NUMBER_BYTES;
  return { items, bytes };
}

function decodeJson(sessionId: string, seq: number, json: string): MessageRecord {
  return decodeStoredMessage(sessionId, seq, json);
}

/**
 * Rebuilds messages from message and chunk items in sort-key order. A piece that is missing,
 * out of place, not stamped with its message item's `digest`, or undecodable is a
 * CorruptRecordError naming the message's seq: a chunk of another message is never joined to
 * this one. A chunk item no message item claims (beyond its `parts`) is a leftover of an earlier
 * session under the same id, whose message at that seq was larger; it is skipped. (Chunked
 * messages written before `digest` existed carry none and are joined by position alone.)
 */
export function decodeMessages(sessionId: string, items: Item[]): MessageRecord[] {
  const messages: MessageRecord[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const key = parseSk(item[A.sk]?.S ?? '');
    if (key === null || key.kind === 'session') continue;
    if (key.kind === 'chunk') continue;
    const head = item[A.body]?.S;
    if (head === undefined)
      throw new CorruptRecordError({ sessionId, seq: key.seq, reason: 'body is missing or not a string' });
    const parts = item[A.parts] === undefined ? 0 : Number(item[A.parts]!.N);
    if (!Number.isSafeInteger(parts) || parts < 0) {
      throw new CorruptRecordError({ sessionId, seq: key.seq, reason: 'parts is not a count' });
    }
    const pieces = [head];
    const digest = item[A.digest]?.S;
    for (let index = 1; index <= parts; index++) {
      const chunk = items[i + index];
      const chunkKey = chunk ? parseSk(chunk[A.sk]?.S ?? '') : null;
      const piece = chunk?.[A.body]?.S;
      if (
        chunkKey?.kind !== 'chunk' ||
        chunkKey.seq !== key.seq ||
        chunkKey.index !== index ||
        piece === undefined ||
        chunk?.[A.digest]?.S !== digest
      ) {
        throw new CorruptRecordError({
          sessionId,
          seq: key.seq,
          reason: `chunk ${index} of ${parts} is missing or not this message's`,
        });
      }
      pieces.push(piece);
    }
    i += parts;
    messages.push(decodeJson(sessionId, key.seq, pieces.length === 1 ? head : pieces.join('')));
  }
  return messages;
}
