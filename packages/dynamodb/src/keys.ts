/**
 * Sort keys of the single-table layout. Every item of a session shares its partition
 * (`pk` = session id), so one Query reads a whole session in sort-key order:
 *
 *   m#0000000000000001        message seq 1 (its JSON, or the first piece of it)
 *   m#0000000000000001#001    second piece of message 1, when it is over one item's size
 *   m#0000000000000002        message seq 2
 *   session                   the session item ('s' sorts after every 'm#…' key)
 *
 * Seqs are zero-padded to 16 digits (Number.MAX_SAFE_INTEGER has 16), so text order is seq
 * order, and a chunk key sorts after its message and before the next message.
 */

export const SESSION_SK = 'session';
export const MESSAGE_PREFIX = 'm#';

const SEQ_DIGITS = 16;
const CHUNK_DIGITS = 3;

export function messageSk(seq: number): string {
  return MESSAGE_PREFIX + String(seq).padStart(SEQ_DIGITS, '0');
}

export function chunkSk(seq: number, index: number): string {
  return `${messageSk(seq)}#${String(index).padStart(CHUNK_DIGITS, '0')}`;
}

/** What a sort key names; `null` for keys this layout never writes. */
export type ParsedSk =
  | { kind: 'session' }
  | { kind: 'message'; seq: number }
  | { kind: 'chunk'; seq: number; index: number };

const MESSAGE_SK = /^m#(\d{16})(?:#(\d{3}))?$/;

export function parseSk(sk: string): ParsedSk | null {
  if (sk === SESSION_SK) return { kind: 'session' };
  const match = MESSAGE_SK.exec(sk);
  if (!match) return null;
  const seq = Number(match[1]);
  return match[2] === undefined ? { kind: 'message', seq } : { kind: 'chunk', seq, index: Number(match[2]) };
}
