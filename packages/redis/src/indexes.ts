import type { SessionInit } from '@agentstore/core';
import { indexMember, sessionTag } from './keys.ts';

/**
 * The session indexes, spread over the Cluster instead of one hot key:
 *
 *   <prefix>ix:{a.<b>}               every session            (lex sorted set, score 0)
 *   <prefix>ix:{o.<owner>.<b>}       sessions of one owner    (lex)
 *   <prefix>ix:{t.<tenant>.<b>}      sessions of one tenant   (lex)
 *   <prefix>ix:{g.<agent>.<b>}       sessions of one agent    (lex)
 *   <prefix>ix:{i.<b>}               activity, scored by ms   (for deleteIdleSessions)
 *
 * `<b>` is one of INDEX_BUCKETS buckets chosen by a hash of the session id, and each key's hash
 * tag differs, so the entries of even one huge tenant or agent land on INDEX_BUCKETS slots (on
 * as many masters as the Cluster has, up to that). A listing reads the first page of every
 * bucket of one index and merges them: INDEX_BUCKETS commands (sent at once) per page of ids,
 * however many sessions there are. Filter values are base64url in the tag (no braces).
 */
export const INDEX_BUCKETS = 16;

/** FNV-1a over the id's tag: stable across processes and releases (it names keys). */
export function bucketOf(sessionId: string): number {
  const tag = sessionTag(sessionId);
  let hash = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) {
    hash ^= tag.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % INDEX_BUCKETS;
}

export type IndexKind = 'a' | 'o' | 't' | 'g';

export interface IndexKeys {
  /** The INDEX_BUCKETS keys of one lex index (all sessions, or one filter value). */
  lex(kind: IndexKind, value?: string): string[];
  /** The INDEX_BUCKETS keys of the activity index. */
  activity(): string[];
  /** Every lex index key a session with these fields is a member of. */
  memberships(sessionId: string, fields: Pick<SessionInit, 'agentName' | 'ownerId' | 'tenantId'>): string[];
  activityKey(sessionId: string): string;
}

const buckets = Array.from({ length: INDEX_BUCKETS }, (_, b) => b);

export function indexKeys(prefix: string): IndexKeys {
  const key = (kind: string, value: string | undefined, bucket: number) =>
    `${prefix}ix:{${kind}.${value === undefined ? '' : `${sessionTag(value)}.`}${bucket}}`;
  return {
    lex: (kind, value) => buckets.map((b) => key(kind, value, b)),
    activity: () => buckets.map((b) => key('i', undefined, b)),
    memberships(sessionId, { agentName, ownerId, tenantId }) {
      const b = bucketOf(sessionId);
      const keys = [key('a', undefined, b), key('g', agentName ?? '', b)];
      if (ownerId !== null && ownerId !== undefined) keys.push(key('o', ownerId, b));
      if (tenantId !== null && tenantId !== undefined) keys.push(key('t', tenantId, b));
      return keys;
    },
    activityKey: (sessionId) => key('i', undefined, bucketOf(sessionId)),
  };
}

export { indexMember };
