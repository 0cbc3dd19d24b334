import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The session indexes: one GSI per listing filter plus one for retention, each keyed by an
 * attribute that only session items carry (so the GSIs are sparse) and that is written once, when
 * the session is created. Appends change none of them: an append never writes to a GSI.
 *
 *   GSI            partition attribute            sort     serves
 *   sessions-all     gA = 'a#<b>'                 pk       listSessions()
 *   sessions-owner   gO = 'o#<owner>'             pk       listSessions({ ownerId })
 *   sessions-tenant  gT = 't#<b>#<tenant>'        pk       listSessions({ tenantId })
 *   sessions-agent   gG = 'g#<b>#<agent>'         pk       listSessions({ agentName })
 *   sessions-idle    gI = 'i#<b>'                 idleAt   deleteIdleSessions
 *
 * `<b>` is one of SHARDS write shards picked by a hash of the session id, so even one huge
 * tenant or agent (or every session, for gA) spreads its writes and reads over SHARDS partition
 * values; a listing queries each shard and merges. An owner's sessions are one partition value:
 * owners are many and small, and one Query beats SHARDS of them.
 */
export const SHARDS = 16;

export type IndexName = 'all' | 'owner' | 'tenant' | 'agent';

export const GSI = {
  all: 'sessions-all',
  owner: 'sessions-owner',
  tenant: 'sessions-tenant',
  agent: 'sessions-agent',
  idle: 'sessions-idle',
} as const;

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

/** The partition values a listing of `index` (for `value`) must query. */
export function partitionsOf(index: IndexName, value?: string): string[] {
  switch (index) {
    case 'all':
      return shardList.map((b) => `a#${b}`);
    case 'owner':
      return [`o#${valueKey(value ?? '')}`];
    case 'tenant':
      return shardList.map((b) => `t#${b}#${valueKey(value ?? '')}`);
    case 'agent':
      return shardList.map((b) => `g#${b}#${valueKey(value ?? '')}`);
  }
}

export const idlePartitions = (): string[] => shardList.map((b) => `i#${b}`);

/** The index attributes a new session item gets. */
export function indexValues(
  sessionId: string,
  fields: { agentName: string; ownerId: string | null; tenantId: string | null },
): Record<'gA' | 'gG' | 'gI' | 'gO' | 'gT', string | null> {
  const b = shardOf(sessionId);
  return {
    gA: `a#${b}`,
    gG: `g#${b}#${valueKey(fields.agentName)}`,
    gI: `i#${b}`,
    gO: fields.ownerId === null ? null : `o#${valueKey(fields.ownerId)}`,
    gT: fields.tenantId === null ? null : `t#${b}#${valueKey(fields.tenantId)}`,
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
