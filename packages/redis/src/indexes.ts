import type { SessionInit } from '@agentstore/core';
import { indexMember, sessionTag } from './keys.ts';

/**
 * The session indexes, spread over the Cluster instead of one hot key:
 *
 *   <prefix>ix:{a.<b>}                         every session            (lex sorted set, score 0)
 *   <prefix>ix:{o.<owner>.<b>}                 sessions of one owner    (lex)
 *   <prefix>ix:{t.<tenant>.<b>}                sessions of one tenant   (lex)
 *   <prefix>ix:{g.<agent>.<b>}                 sessions of one agent    (lex)
 *   <prefix>ix:{ot.<owner>.<tenant>.<b>}       one owner within one tenant, and likewise
 *   <prefix>ix:{og.…}, {tg.…}, {otg.…}         for every other combination of filters
 *   <prefix>ix:{i.<b>}                         activity, scored by ms   (for deleteIdleSessions)
 *
 * `<b>` is one of INDEX_BUCKETS buckets chosen by a hash of the session id, and each key's hash
 * tag differs, so the entries of even one huge tenant or agent land on INDEX_BUCKETS slots (on
 * as many masters as the Cluster has, up to that). A listing reads the first page of every
 * bucket of the one index that holds exactly the sessions its filters select, and merges them:
 * INDEX_BUCKETS commands (sent at once) per page of ids, however many sessions there are and
 * whichever filters are combined. Filter values are base64url in the tag (no braces, no dots,
 * so the parts of a combined key cannot run into each other).
 *
 * The price of combined filters in O(page): a session with an owner and a tenant is in 8 lex
 * indexes (all, g, o, t, og, tg, ot, otg) instead of 4; with only one of them, in 4 (a, g, and
 * that one alone and with g) instead of 3; with neither, in 2. Each is one ZADD at creation and
 * one ZREM at deletion; appends touch none.
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

/** 'a' (every session), 'i' (activity) or the filters it serves, in the order o, t, g. */
export type IndexKind = 'a' | 'o' | 't' | 'g' | 'ot' | 'og' | 'tg' | 'otg';

type IndexedFields = Pick<SessionInit, 'agentName' | 'ownerId' | 'tenantId'>;

/** A listing's filters: each one given narrows it. */
export interface IndexFilter {
  ownerId?: string | undefined;
  tenantId?: string | undefined;
  agentName?: string | undefined;
}

/** The index holding exactly the sessions `filter` selects, and the values naming its keys. */
export function indexFor(filter: IndexFilter): { kind: IndexKind; values: string[] } {
  let kind = '';
  const values: string[] = [];
  if (filter.ownerId !== undefined) {
    kind += 'o';
    values.push(filter.ownerId);
  }
  if (filter.tenantId !== undefined) {
    kind += 't';
    values.push(filter.tenantId);
  }
  if (filter.agentName !== undefined) {
    kind += 'g';
    values.push(filter.agentName);
  }
  return { kind: (kind || 'a') as IndexKind, values };
}

export interface IndexKeys {
  /** The INDEX_BUCKETS keys of one lex index (every session, or one combination of filter values). */
  lex(kind: IndexKind, values?: string | string[]): string[];
  /** The INDEX_BUCKETS keys of the activity index. */
  activity(): string[];
  /** Every lex index key a session with these fields is a member of. */
  memberships(sessionId: string, fields: IndexedFields): string[];
  activityKey(sessionId: string): string;
}

const buckets = Array.from({ length: INDEX_BUCKETS }, (_, b) => b);

/** Every non-empty subset of a session's filter values (agent name always; owner, tenant when set). */
function filterCombinations({ agentName, ownerId, tenantId }: IndexedFields): IndexFilter[] {
  const owners = ownerId === null || ownerId === undefined ? [undefined] : [undefined, ownerId];
  const tenants = tenantId === null || tenantId === undefined ? [undefined] : [undefined, tenantId];
  const combinations: IndexFilter[] = [];
  for (const owner of owners) {
    for (const tenant of tenants) {
      for (const agent of [undefined, agentName ?? '']) {
        combinations.push({ ownerId: owner, tenantId: tenant, agentName: agent });
      }
    }
  }
  return combinations;
}

export function indexKeys(prefix: string): IndexKeys {
  const key = (kind: string, values: string[], bucket: number) =>
    `${prefix}ix:{${kind}.${values.map((value) => `${sessionTag(value)}.`).join('')}${bucket}}`;
  const asList = (values: string | string[] | undefined) =>
    values === undefined ? [] : typeof values === 'string' ? [values] : values;
  return {
    lex: (kind, values) => buckets.map((b) => key(kind, asList(values), b)),
    activity: () => buckets.map((b) => key('i', [], b)),
    memberships(sessionId, fields) {
      const b = bucketOf(sessionId);
      return filterCombinations(fields).map((filter) => {
        const { kind, values } = indexFor(filter);
        return key(kind, values, b);
      });
    },
    activityKey: (sessionId) => key('i', [], bucketOf(sessionId)),
  };
}

export { indexMember };
