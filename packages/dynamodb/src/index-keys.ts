import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The session indexes: one GSI per combination of listing filters plus one for retention, each
 * keyed by an attribute that only session items carry (so the GSIs are sparse) and that is
 * written once, when the session is created. Appends change none of them: an append never writes
 * to a GSI.
 *
 *   GSI                     partition attribute                 sort     serves
 *   sessions-all              gA = 'a#<b>'                      pk       listSessions()
 *   sessions-owner            gO = 'o#<owner>'                  pk       listSessions({ ownerId })
 *   sessions-tenant           gT = 't#<b>#<tenant>'             pk       listSessions({ tenantId })
 *   sessions-agent            gG = 'g#<b>#<agent>'              pk       listSessions({ agentName })
 *   sessions-owner-tenant     gOT = 'ot#<owner>#<tenant>'       pk       { ownerId, tenantId }
 *   sessions-owner-agent      gOG = 'og#<owner>#<agent>'        pk       { ownerId, agentName }
 *   sessions-tenant-agent     gTG = 'tg#<b>#<tenant>#<agent>'   pk       { tenantId, agentName }
 *   sessions-owner-tenant-agent  gOTG = 'otg#<o>#<t>#<agent>'   pk       all three
 *   sessions-idle             gI = 'i#<b>'                      idleAt   deleteIdleSessions
 *
 * So every combination of filters reads exactly its own sessions: a page is about `limit` index
 * entries whatever the filters. The price: a session with an owner and a tenant is written to 9
 * indexes at creation and removed from 9 at deletion (one GSI write unit each for these small
 * projections) instead of 5; with one of them, 7 (a, g, i, it, it with g); with neither, 3.
 *
 * `<b>` is one of SHARDS write shards picked by a hash of the session id, so even one huge
 * tenant or agent (or every session, for gA) spreads its writes and reads over SHARDS partition
 * values; a listing queries each shard and merges. An owner's sessions are one partition value
 * (also within a tenant or agent): owners are many and small, and one Query beats SHARDS of them.
 * In a combined value each part is `<UTF-8 length>.<value>`, so no two combinations collide.
 */
export const SHARDS = 16;

export type IndexName =
  | 'all'
  | 'owner'
  | 'tenant'
  | 'agent'
  | 'ownerTenant'
  | 'ownerAgent'
  | 'tenantAgent'
  | 'ownerTenantAgent';

export const GSI = {
  all: 'sessions-all',
  owner: 'sessions-owner',
  tenant: 'sessions-tenant',
  agent: 'sessions-agent',
  ownerTenant: 'sessions-owner-tenant',
  ownerAgent: 'sessions-owner-agent',
  tenantAgent: 'sessions-tenant-agent',
  ownerTenantAgent: 'sessions-owner-tenant-agent',
  idle: 'sessions-idle',
} as const;

/** The partition attribute of each listing index. */
export const INDEX_ATTRIBUTE = {
  all: 'gA',
  owner: 'gO',
  tenant: 'gT',
  agent: 'gG',
  ownerTenant: 'gOT',
  ownerAgent: 'gOG',
  tenantAgent: 'gTG',
  ownerTenantAgent: 'gOTG',
} as const satisfies Record<IndexName, string>;

/** FNV-1a over the id's UTF-16 code units: stable across processes and releases. */
export function shardOf(sessionId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % SHARDS;
}

/**
 * A filter value as it goes into a partition value: itself up to 512 UTF-8 bytes, else its
 * SHA-256 (a GSI partition key holds at most 2,048 bytes; fields may have 16 KiB). Listings also
 * filter on the projected field itself, so a value that collides with a digest is never mixed in.
 */
function valueKey(value: string): string {
  return Buffer.byteLength(value) <= 512
    ? value
    : `sha256:${createHash('sha256').update(value).digest('base64url')}`;
}

const shardList = Array.from({ length: SHARDS }, (_, b) => b);

/** Filters of a listing; each one given narrows it. */
export interface ListingFilter {
  ownerId?: string | undefined;
  tenantId?: string | undefined;
  agentName?: string | undefined;
}

/** One part of a combined partition value: its length first, so parts cannot run together. */
const part = (value: string) => {
  const key = valueKey(value);
  return `${Buffer.byteLength(key)}.${key}`;
};

/**
 * The index that holds exactly the sessions `filter` selects, and the partition values (one when
 * an owner is given, SHARDS otherwise) a listing must query.
 */
export function listingIndex(filter: ListingFilter): { index: IndexName; partitions: string[] } {
  const { ownerId: o, tenantId: t, agentName: g } = filter;
  const sharded = (make: (b: number) => string) => shardList.map(make);
  if (o !== undefined) {
    if (t !== undefined && g !== undefined)
      return { index: 'ownerTenantAgent', partitions: [`otg#${part(o)}#${part(t)}#${part(g)}`] };
    if (t !== undefined) return { index: 'ownerTenant', partitions: [`ot#${part(o)}#${part(t)}`] };
    if (g !== undefined) return { index: 'ownerAgent', partitions: [`og#${part(o)}#${part(g)}`] };
    return { index: 'owner', partitions: [`o#${valueKey(o)}`] };
  }
  if (t !== undefined && g !== undefined)
    return { index: 'tenantAgent', partitions: sharded((b) => `tg#${b}#${part(t)}#${part(g)}`) };
  if (t !== undefined) return { index: 'tenant', partitions: sharded((b) => `t#${b}#${valueKey(t)}`) };
  if (g !== undefined) return { index: 'agent', partitions: sharded((b) => `g#${b}#${valueKey(g)}`) };
  return { index: 'all', partitions: sharded((b) => `a#${b}`) };
}

export const idlePartitions = (): string[] => shardList.map((b) => `i#${b}`);

type IndexAttribute = (typeof INDEX_ATTRIBUTE)[IndexName] | 'gI';

/** The index attributes a new session item gets (null: the session is in no such index). */
export function indexValues(
  sessionId: string,
  fields: { agentName: string; ownerId: string | null; tenantId: string | null },
): Record<IndexAttribute, string | null> {
  const b = shardOf(sessionId);
  const { agentName: g, ownerId: o, tenantId: t } = fields;
  const pick = (filter: ListingFilter) => {
    const { partitions } = listingIndex(filter);
    return partitions.length === 1 ? partitions[0]! : partitions[b]!;
  };
  return {
    gA: pick({}),
    gG: pick({ agentName: g }),
    gI: `i#${b}`,
    gO: o === null ? null : pick({ ownerId: o }),
    gT: t === null ? null : pick({ tenantId: t }),
    gOT: o === null || t === null ? null : pick({ ownerId: o, tenantId: t }),
    gOG: o === null ? null : pick({ ownerId: o, agentName: g }),
    gTG: t === null ? null : pick({ tenantId: t, agentName: g }),
    gOTG: o === null || t === null ? null : pick({ ownerId: o, tenantId: t, agentName: g }),
  };
}

/**
 * The `SET` clauses (and their values, added to `values`) that give a session item created by
 * this write its index attributes; `if_not_exists`, so an existing session keeps its own.
 */
export function indexSets(
  sessionId: string,
  fields: { agentName: string; ownerId: string | null; tenantId: string | null },
  nowMs: number,
  values: Record<string, AttributeValue>,
): string[] {
  const sets: string[] = [];
  for (const [name, value] of Object.entries(indexValues(sessionId, fields))) {
    if (value === null) continue;
    values[`:${name}`] = { S: value };
    sets.push(`#${name} = if_not_exists(#${name}, :${name})`);
  }
  values[':idleAt'] = { N: String(nowMs) };
  sets.push('#idleAt = if_not_exists(#idleAt, :idleAt)');
  return sets;
}
