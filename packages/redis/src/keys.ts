import { InvalidArgumentError } from '@agentstore/core';

/** Strict on purpose: the prefix is spliced into every key name, so no braces, spaces or globs. */
const KEY_PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export const DEFAULT_KEY_PREFIX = 'agentstore:';

export function validateKeyPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || !KEY_PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError({
      argument: 'keyPrefix',
      reason: `must match ${KEY_PREFIX_PATTERN} (letters, digits, "_", ".", ":", "-"; at most 64 characters)`,
    });
  }
}

/**
 * The hash-tag content for a session: base64url of the UTF-8 of the id's JSON string body.
 * base64url has no `{`/`}`, so an id cannot close the tag early, and the JSON escaping keeps
 * lone surrogates distinct (plain UTF-8 would turn them all into U+FFFD and make ids collide).
 */
export function sessionTag(sessionId: string): string {
  const body = JSON.stringify(sessionId).slice(1, -1);
  return Buffer.from(body, 'utf8').toString('base64url');
}

/**
 * The index member for a session: the bytes of the id's UTF-8 as lowercase hex. Byte order of
 * this text is the byte order of the UTF-8, which is code point order (`compareSessionIds`), so
 * ZRANGEBYLEX pages in the order every store lists sessions in. Ids are well-formed UTF-16 (lone
 * surrogates are refused), so every id maps to exactly one member and back.
 */
export function indexMember(sessionId: string): string {
  return Buffer.from(sessionId, 'utf8').toString('hex');
}

/** The id an index member stands for, or null for a member this store never writes. */
export function sessionIdFromMember(member: string): string | null {
  if (member.length % 2 !== 0 || !/^[0-9a-f]*$/.test(member)) return null;
  const id = Buffer.from(member, 'hex').toString('utf8');
  // Not UTF-8 (decoded with U+FFFD in it): not ours.
  return indexMember(id) === member ? id : null;
}

/**
 * A member of the single `<prefix>sessions` index of earlier releases: the id's UTF-16 code
 * units as 4 hex digits each (read by `reindex()` only).
 */
export function sessionIdFromLegacyMember(member: string): string | null {
  if (member.length % 4 !== 0 || !/^[0-9a-f]*$/.test(member)) return null;
  return Buffer.from(member, 'hex').swap16().toString('utf16le');
}

export interface SessionKeys {
  /** Hash: the session record and its lease. */
  session: string;
  /** List: message JSON, element i holds seq i + 1. */
  messages: string;
  /** Cluster only, short-lived: a creation is adding the session's index entries (see scripts.ts). */
  creating: string;
}

export interface KeySpace {
  prefix: string;
  /** The single index of releases before 0.2 (one hot key); read only by `reindex()`. */
  index: string;
  session(sessionId: string): SessionKeys;
}

export function keySpace(prefix: string): KeySpace {
  return {
    prefix,
    index: `${prefix}sessions`,
    session(sessionId) {
      const base = `${prefix}{${sessionTag(sessionId)}}`;
      return { session: `${base}:s`, messages: `${base}:m`, creating: `${base}:c` };
    },
  };
}
