import {
  type DeleteIdleSessionsResult,
  InvalidArgumentError,
  type ListSessionsInput,
  type ListSessionsResult,
  type SessionInit,
  type SessionRecord,
} from '@agentstore/core';
import { parseRetentionCursor, type RetentionRequest } from '@agentstore/core/store';
import type { Cluster, Redis } from 'ioredis';
import { bucketOf, INDEX_BUCKETS, type IndexKeys, indexFor } from './indexes.ts';
import { indexMember, type KeySpace, sessionIdFromLegacyMember, sessionIdFromMember } from './keys.ts';
import type { ScriptRunner } from './script-runner.ts';

export interface IndexContext {
  client: Redis | Cluster;
  isCluster: boolean;
  /**
   * Standalone: the start of every index key's name as the server sees it (the client's
   * keyPrefix included), for scripts that remove a session's index entries themselves; '' on a
   * Cluster, where the scripts cannot reach them (other slots).
   */
  inlineIndexStart: string;
  keys: KeySpace;
  ix: IndexKeys;
  scripts: ScriptRunner;
  /** The session record, or null when the session does not exist. */
  loadSession(sessionId: string): Promise<SessionRecord | null>;
}

type IndexedFields = Pick<SessionInit, 'agentName' | 'ownerId' | 'tenantId'>;

/** The indexed fields from the session hash's JSON text (HMGET agentName ownerId tenantId). */
export function indexedFields(stored: (string | null | undefined)[]): IndexedFields {
  const parse = (text: string | null | undefined) => JSON.parse(text ?? 'null') as string | null;
  return { agentName: parse(stored[0]) ?? '', ownerId: parse(stored[1]), tenantId: parse(stored[2]) };
}

/**
 * Cluster only: adds a session to every index it belongs to. Called once, between the creating
 * script's two runs: after its creation marker is set (so a racing prune puts back what it
 * removes, see `pruneStale`) and before the session exists (so a session that exists is always
 * listed).
 */
export async function addToIndexes(
  ctx: IndexContext,
  sessionId: string,
  fields: IndexedFields,
  nowMs: number,
) {
  const member = indexMember(sessionId);
  await Promise.all([
    ...ctx.ix.memberships(sessionId, fields).map((key) => ctx.client.zadd(key, 0, member)),
    // NX: a re-index never moves the activity score up past a session's last append.
    ctx.client.zadd(ctx.ix.activityKey(sessionId), 'NX', nowMs, member),
  ]);
}

/**
 * Removes a session's member from `keys` (each its own command: other slots) unless the session
 * is live. Standalone: per key, one script checks and removes atomically. Cluster (indexes and
 * session in different slots): remove, then look again, and if the session exists by now or a
 * creation of it is in progress (its marker, set before the creation adds any entry and dropped
 * only when the session exists), put back what was removed. So an entry is never lost whichever
 * way a removal and a re-creation of the id interleave: the re-creation's own ZADDs may have
 * found the entries still there (a no-op) just before this removal took them.
 * Put back with NX and score 0: a lex entry's score is always 0, and in the activity index 0 is
 * below any `idleBefore`, so the next sweep visits the entry and moves it up to the session's
 * last append; NX never moves down a score the creation set meanwhile.
 */
async function removeUnlessLive(ctx: IndexContext, sessionId: string, keys: string[]) {
  const member = indexMember(sessionId);
  const session = ctx.keys.session(sessionId);
  if (!ctx.isCluster) {
    await Promise.all(keys.map((key) => ctx.scripts.pruneIndex([key, session.session], [member])));
    return;
  }
  const removed = await Promise.all(keys.map((key) => ctx.client.zrem(key, member)));
  const restore = keys.filter((_, i) => removed[i]! > 0);
  if (restore.length === 0 || (await ctx.client.exists(session.session, session.creating)) === 0) return;
  await Promise.all(restore.map((key) => ctx.client.zadd(key, 'NX', 0, member)));
}

/**
 * Removes a deleted session from every index it was in. Only a Cluster needs it: on a standalone
 * server the deleting scripts remove the entries themselves.
 */
export function removeFromIndexes(ctx: IndexContext, sessionId: string, fields: IndexedFields) {
  return removeUnlessLive(ctx, sessionId, [
    ...ctx.ix.memberships(sessionId, fields),
    ctx.ix.activityKey(sessionId),
  ]);
}

/** An index entry whose session is gone (expired, deleted, or a creation that failed) is removed. */
export function pruneStale(ctx: IndexContext, key: string, sessionId: string) {
  return removeUnlessLive(ctx, sessionId, [key]);
}

/**
 * Walks the one index that holds exactly the sessions the filters select (every combination of
 * owner, tenant and agent name has its own, see indexes.ts), so a page reads about `limit`
 * entries whichever filters are given. Each round reads at most `batch` entries from each bucket
 * and keeps the first `batch` of their merge, which are exactly the next `batch` ids of the whole
 * index. The filters are still checked on each record (a safety net: an entry never outlives its
 * session's fields, which do not change).
 */
export async function listSessions(ctx: IndexContext, input: ListSessionsInput): Promise<ListSessionsResult> {
  const { ownerId, tenantId, agentName, limit, cursor } = input;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError({ argument: 'limit', reason: 'must be a positive integer' });
  }
  const { kind, values } = indexFor({ ownerId, tenantId, agentName });
  const bucketKeys = ctx.ix.lex(kind, values);
  const matches = (s: SessionRecord) =>
    (ownerId === undefined || s.ownerId === ownerId) &&
    (tenantId === undefined || s.tenantId === tenantId) &&
    (agentName === undefined || s.agentName === agentName);
  const batch = Math.min(limit + 1, 1000);
  const found: SessionRecord[] = [];
  let from = cursor == null ? '-' : `(${indexMember(cursor)}`;
  while (found.length <= limit) {
    const perBucket = await Promise.all(
      bucketKeys.map((key) => ctx.client.zrangebylex(key, from, '+', 'LIMIT', 0, batch)),
    );
    const merged = perBucket
      .flatMap((members, b) => members.map((member) => ({ member, key: bucketKeys[b]! })))
      .sort((x, y) => (x.member < y.member ? -1 : x.member > y.member ? 1 : 0))
      .slice(0, batch);
    if (merged.length === 0) break;
    from = `(${merged[merged.length - 1]!.member}`;
    const entries = merged.flatMap(({ member, key }) => {
      const id = sessionIdFromMember(member);
      return id === null ? [] : [{ id, key }];
    });
    const rows = await Promise.all(entries.map(({ id }) => ctx.loadSession(id)));
    const stale: Promise<void>[] = [];
    rows.forEach((row, i) => {
      if (row === null) stale.push(pruneStale(ctx, entries[i]!.key, entries[i]!.id));
      else if (found.length <= limit && matches(row)) found.push(row);
    });
    await Promise.all(stale);
    if (merged.length < batch) break;
  }
  const page = found.slice(0, limit);
  return { sessions: page, nextCursor: found.length > limit ? page[page.length - 1]!.id : null };
}

/** Cursor of a retention sweep: the bucket being walked and the last entry examined in it. */
type SweepPosition = [bucket: number, score: number, member: string];

function decodePosition(cursor: string | null): SweepPosition {
  if (cursor === null) return [0, Number.NEGATIVE_INFINITY, ''];
  return parseRetentionCursor(
    cursor,
    (parsed): parsed is SweepPosition =>
      Array.isArray(parsed) &&
      parsed.length === 3 &&
      Number.isSafeInteger(parsed[0]) &&
      parsed[0] >= 0 &&
      parsed[0] < INDEX_BUCKETS &&
      typeof parsed[1] === 'number' &&
      typeof parsed[2] === 'string',
  );
}

/**
 * Walks the activity index bucket by bucket, oldest score first. Scores start at a session's
 * creation and are only ever moved up to its last append (`updatedAt`), so every idle session
 * is below `idleBefore` there. Each candidate is decided by one atomic script on its own slot:
 * deleted whole when idle and unleased, re-scored to `updatedAt` when active (leaving the range),
 * passed over when leased, dropped from the index when already gone.
 */
export async function deleteIdleSessions(
  ctx: IndexContext,
  { idleBefore, idleBeforeMs, limit, cursor }: RetentionRequest,
): Promise<DeleteIdleSessionsResult> {
  let [bucket, afterScore, afterMember] = decodePosition(cursor);
  const buckets = ctx.ix.activity();
  const deleted: string[] = [];
  let examined = 0;
  while (bucket < INDEX_BUCKETS && examined < limit) {
    const key = buckets[bucket]!;
    const min = afterScore === Number.NEGATIVE_INFINITY ? '-inf' : String(afterScore);
    const need = limit - examined;
    // From the cursor's score inclusive: the entries there up to the cursor's member were examined
    // already, and only leased ones stay behind (the rest were deleted or moved up), so a little
    // read-ahead skips them; it grows if a run of leased sessions shares one millisecond.
    let fresh: { member: string; score: number }[] = [];
    let exhausted = false;
    for (let ahead = 64; ; ahead *= 4) {
      const raw = await ctx.client.zrangebyscore(
        key,
        min,
        `(${idleBeforeMs}`,
        'WITHSCORES',
        'LIMIT',
        0,
        need + ahead,
      );
      const entries: { member: string; score: number }[] = [];
      for (let i = 0; i < raw.length; i += 2) entries.push({ member: raw[i]!, score: Number(raw[i + 1]) });
      fresh = entries.filter((e) => e.score > afterScore || e.member > afterMember).slice(0, need);
      exhausted = entries.length < need + ahead;
      if (fresh.length > 0 || exhausted) break;
    }
    if (fresh.length === 0) {
      bucket += 1;
      afterScore = Number.NEGATIVE_INFINITY;
      afterMember = '';
      continue;
    }
    await Promise.all(
      fresh.map(async ({ member }) => {
        const id = sessionIdFromMember(member);
        if (id === null) {
          await ctx.client.zrem(key, member);
          return;
        }
        const k = ctx.keys.session(id);
        const reply = (await ctx.scripts.retain(
          [k.session, k.messages],
          [idleBefore, ctx.inlineIndexStart, bucketOf(id), member],
        )) as string[];
        switch (reply[0]) {
          case 'DELETED': {
            deleted.push(id);
            // Standalone: the script removed the index entries already.
            if (ctx.isCluster) await removeFromIndexes(ctx, id, indexedFields(reply.slice(1)));
            return;
          }
          case 'ACTIVE':
            // XX: only if the entry is still there (a concurrent deletion removed it for good).
            await ctx.client.zadd(key, 'XX', Date.parse(reply[1]!), member);
            return;
          case 'GONE':
            // Checked again at removal: the id may be re-created right after the script ran.
            await pruneStale(ctx, key, id);
            return;
          default:
            // LEASED: stays; the cursor moves past it.
            return;
        }
      }),
    );
    examined += fresh.length;
    const last = fresh[fresh.length - 1];
    if (last) [afterScore, afterMember] = [last.score, last.member];
  }
  return {
    deleted,
    nextCursor: bucket >= INDEX_BUCKETS ? null : JSON.stringify([bucket, afterScore, afterMember]),
  };
}

/**
 * Upgrade from the single `<prefix>sessions` sorted set of earlier releases: every session it
 * lists joins the bucketed indexes (activity scored by its `updatedAt`), then leaves the old set,
 * a batch at a time. Safe to run again or while the store is in use; returns how many moved.
 */
export async function reindexLegacy(ctx: IndexContext, batch = 500): Promise<{ reindexed: number }> {
  let reindexed = 0;
  for (;;) {
    const members = await ctx.client.zrangebylex(ctx.keys.index, '-', '+', 'LIMIT', 0, batch);
    if (members.length === 0) return { reindexed };
    await Promise.all(
      members.map(async (member) => {
        const id = sessionIdFromLegacyMember(member);
        if (id !== null) {
          const stored = await ctx.client.hmget(
            ctx.keys.session(id).session,
            'agentName',
            'ownerId',
            'tenantId',
            'updatedAt',
          );
          const updatedAt = stored[3];
          if (stored[0] && updatedAt) {
            await addToIndexes(ctx, id, indexedFields(stored), Date.parse(updatedAt));
            reindexed += 1;
          }
        }
        await ctx.client.zrem(ctx.keys.index, member);
      }),
    );
  }
}
