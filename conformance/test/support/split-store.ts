import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import {
  type AgentStore,
  type AppendInput,
  type Lease,
  LeaseLostError,
  type LoadResult,
  SeqConflictError,
} from '@agentstore/core';
import {
  appendLeaseMatches,
  decodeRetentionCursor,
  decodeSessionColumns,
  encodeRetentionCursor,
  leaseFromColumns,
  type SessionColumns,
  snapshotInput,
  validateAcquireLeaseInput,
  validateAppendInput,
  validateListSessionsInput,
  validateLoadOptions,
  validateRetentionInput,
  validateSessionId,
} from '@agentstore/core/store';
import { nodeSqliteTarget } from '../../../docs/examples/custom-store/conformance-target.ts';
import { nodeSqliteStore, openDatabase } from '../../../docs/examples/custom-store/node-sqlite-store.ts';
import type { ConformanceTarget } from '../../src/index.ts';

/**
 * The mistakes of a real custom store on a real database (a node:sqlite file), each a complete
 * store that passed every check of an earlier kit:
 * - `split-null` / `split-head`: validates, checks the head, inserts the messages in one
 *   autocommit statement and moves the head in a second one (a round trip later), as a MariaDB
 *   store with two awaited statements would. A conflict on the message insert reports
 *   `actualSeq: null` or the head it reads then (which is still `expectedSeq`).
 * - `no-seq-check`: one transaction, but appends after whatever head it finds.
 * - `no-snapshot`: one guarded transaction, but it validates the caller's live objects and then
 *   reads them again to serialise them (no `snapshotInput`), as the four flaws above do; alone,
 *   that is its only mistake.
 *
 * Each flaw below is the example store with exactly one mistake (issue #16's attack):
 * - `fence-live-only`: append compares the lease only while a live lease is stored, so a stale
 *   epoch writes once its successor released the lease or let it lapse.
 * - `check-outside-txn`: head and lease checked before `BEGIN IMMEDIATE`, the write in a
 *   transaction of its own; messages keyed by a rowid (no unique seq). In one process the
 *   synchronous driver never interleaves them; several processes do.
 * - `owner-ci` / `owner-pad-space`: owner and tenant compared with a case-insensitive
 *   (`NOCASE`) or trailing-space-padding (`RTRIM`) collation, in acquireLease and listSessions —
 *   as MariaDB's `_ci` and `PAD SPACE` collations do.
 * - `list-filter-ci`: ownership checked exactly, but listSessions filters case-insensitively.
 * - `stale-cache`: load results cached per store instance, refreshed only by its own writes.
 * - `write-behind`: append acknowledges, then commits on a timer ("group commit").
 * - `retention-client-clock`: deleteIdleSessions judges lease liveness by the caller's `Date`.
 * - `nul-refused`: U+0000 in a message or the state refused with a plain driver error, as
 *   Postgres `text` and `jsonb` do.
 * - `nul-cut`: message content read back as node:sqlite reads a TEXT column, up to its first
 *   U+0000 (what the example store did before it read content as bytes).
 * - `nul-id-cut`: message ids read back the same way (what the example store did before it read
 *   ids as bytes too).
 * - `proto-assign`: stored JSON decoded through `Object.assign`, so an own `__proto__` key
 *   becomes the prototype.
 */
export type SplitFlaw =
  | 'split-null'
  | 'split-head'
  | 'no-seq-check'
  | 'no-snapshot'
  | 'fence-live-only'
  | 'check-outside-txn'
  | 'owner-ci'
  | 'owner-pad-space'
  | 'list-filter-ci'
  | 'stale-cache'
  | 'write-behind'
  | 'retention-client-clock'
  | 'nul-refused'
  | 'nul-cut'
  | 'nul-id-cut'
  | 'proto-assign';

/** The flaws of the first kit, which read the caller's live input (no `snapshotInput`). */
const LIVE_INPUT_FLAWS: ReadonlySet<SplitFlaw> = new Set([
  'split-null',
  'split-head',
  'no-seq-check',
  'no-snapshot',
]);

const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

type Row = SessionColumns & { head_seq: number; lease_epoch: number };

const leaseOf = (row: Row | undefined): Lease | null =>
  row ? leaseFromColumns(row.id, row.lease_holder, row.lease_epoch, row.lease_expires_at) : null;

/** fence-live-only: "if someone holds it right now it must be you; otherwise anyone may write". */
function liveOnlyLeaseMatches(stored: Lease | null, token: AppendInput['lease'], now: number): boolean {
  const live = stored !== null && Date.parse(stored.expiresAt) > now;
  if (!live) return true;
  return token !== null && token.holder === stored.holder && token.epoch === stored.epoch;
}

/** The collation a flawed store compares owner and tenant with (acquireLease) and filters with (listSessions). */
function collations(flaw: SplitFlaw): { owner: string; list: string } {
  if (flaw === 'owner-ci') return { owner: 'NOCASE', list: 'NOCASE' };
  if (flaw === 'owner-pad-space') return { owner: 'RTRIM', list: 'RTRIM' };
  if (flaw === 'list-filter-ci') return { owner: 'BINARY', list: 'NOCASE' };
  return { owner: 'BINARY', list: 'BINARY' };
}

const hasNul = (value: unknown): boolean =>
  typeof value === 'string'
    ? value.includes('\u0000')
    : Array.isArray(value)
      ? value.some(hasNul)
      : typeof value === 'object' && value !== null
        ? Object.entries(value).some(([key, item]) => key.includes('\u0000') || hasNul(item))
        : false;

/** proto-assign: a "plain object" normaliser in the JSON reviver, which `Object.assign`s `__proto__`. */
const plainObjects = (_key: string, value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value) ? Object.assign({}, value) : value;

export function splitStore(path: string, flaw: SplitFlaw): AgentStore {
  const correct = nodeSqliteStore({ path });
  const db = openDatabase(path);
  const sessionRow = db.prepare('SELECT * FROM agent_sessions WHERE id = ?');
  const clock = db.prepare("SELECT CAST(round(unixepoch('now', 'subsec') * 1000) AS INTEGER) AS now");
  const dbNow = () => Number((clock.get() as { now: number | bigint }).now);
  const insertSession = db.prepare(
    `INSERT INTO agent_sessions (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const moveHead = db.prepare(
    `UPDATE agent_sessions SET head_seq = ?, state = coalesce(?, state), updated_at = ?,
       lease_holder = CASE WHEN ? THEN NULL ELSE lease_holder END,
       lease_expires_at = CASE WHEN ? THEN NULL ELSE lease_expires_at END
     WHERE id = ? AND (head_seq = ? OR ?)`,
  );
  const insertMessages = (rows: number) =>
    db.prepare(
      `INSERT INTO agent_messages (session_id, seq, id, role, content, meta) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    );
  const { owner: ownerCollation, list: listCollation } = collations(flaw);
  const looseOwner = db.prepare(
    `SELECT owner_id, tenant_id FROM agent_sessions
     WHERE id = ? AND owner_id IS ? COLLATE ${ownerCollation} AND tenant_id IS ? COLLATE ${ownerCollation}`,
  );

  const transaction = <T>(work: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  };

  /** Inserts the messages at `base + 1…`, creates the session if missing and moves the head (guarded unless `unguarded`). */
  function write(
    sessionId: string,
    input: AppendInput,
    base: number,
    unguarded = false,
  ): { headSeq: number } {
    const iso = new Date(dbNow()).toISOString();
    const row = sessionRow.get(sessionId) as Row | undefined;
    const headSeq = base + input.messages.length;
    const state = input.session?.state === undefined ? null : JSON.stringify(input.session.state);
    if (!row) {
      const init = input.session?.init;
      insertSession.run(
        sessionId,
        init?.agentName ?? '',
        init?.ownerId ?? null,
        init?.tenantId ?? null,
        state ?? JSON.stringify(init?.state ?? null),
        0,
        iso,
        iso,
      );
    }
    insertMessages(input.messages.length).run(...messageValues(sessionId, input, base));
    const release = input.releaseLease ? 1 : 0;
    const moved = moveHead.run(headSeq, state, iso, release, release, sessionId, base, unguarded ? 1 : 0);
    if (moved.changes !== 1) throw new SeqConflictError({ sessionId, expectedSeq: base, actualSeq: null });
    return { headSeq };
  }

  const messageValues = (sessionId: string, input: AppendInput, base: number): SQLInputValue[] =>
    input.messages.flatMap(({ id, role, content, ...meta }, i) => [
      sessionId,
      base + i + 1,
      id,
      role,
      content,
      JSON.stringify(meta),
    ]);

  /** The checks every append makes: the lease first (live-only for fence-live-only), then the seq. */
  function check(sessionId: string, input: AppendInput): number {
    const row = sessionRow.get(sessionId) as Row | undefined;
    const head = row?.head_seq ?? 0;
    const matches = flaw === 'fence-live-only' ? liveOnlyLeaseMatches : appendLeaseMatches;
    if (!matches(leaseOf(row), input.lease, dbNow())) {
      throw new LeaseLostError({
        sessionId,
        holder: input.lease?.holder ?? null,
        epoch: input.lease?.epoch ?? null,
      });
    }
    const expected = flaw === 'no-seq-check' ? head : input.expectedSeq;
    if (head !== expected) {
      throw new SeqConflictError({
        sessionId,
        expectedSeq: input.expectedSeq,
        actualSeq: flaw === 'split-null' ? null : head,
      });
    }
    return head;
  }

  // stale-cache: one cache per store instance, dropped only by this instance's own calls.
  const cache = new Map<string, Map<number, LoadResult>>();
  const cached =
    <A extends unknown[], R>(method: (sessionId: string, ...rest: A) => Promise<R>) =>
    async (sessionId: string, ...rest: A): Promise<R> => {
      cache.delete(sessionId);
      return method(sessionId, ...rest);
    };
  // write-behind: appends answered first and committed later, in order.
  let behind: Promise<unknown> = Promise.resolve();

  async function splitAppend(sessionId: string, input: AppendInput): Promise<{ headSeq: number }> {
    const conflict = () =>
      new SeqConflictError({
        sessionId,
        expectedSeq: input.expectedSeq,
        actualSeq:
          flaw === 'split-null' ? null : ((sessionRow.get(sessionId) as Row | undefined)?.head_seq ?? 0),
      });
    const head = check(sessionId, input);
    try {
      insertMessages(input.messages.length).run(...messageValues(sessionId, input, head));
    } catch (error) {
      if ((error as { errcode?: number }).errcode === 1555) throw conflict(); // SQLITE_CONSTRAINT_PRIMARYKEY
      throw error;
    }
    // The second statement, one round trip later: the window a crash or a reader falls into.
    await roundTrip();
    const iso = new Date(dbNow()).toISOString();
    const row = sessionRow.get(sessionId) as Row | undefined;
    const newHead = head + input.messages.length;
    const state = input.session?.state === undefined ? null : JSON.stringify(input.session.state);
    const init = input.session?.init;
    try {
      if (row) {
        if (moveHead.run(newHead, state, iso, 0, 0, sessionId, head, 0).changes !== 1) throw conflict();
      } else {
        insertSession.run(
          sessionId,
          init?.agentName ?? '',
          init?.ownerId ?? null,
          init?.tenantId ?? null,
          state ?? JSON.stringify(init?.state ?? null),
          newHead,
          iso,
          iso,
        );
      }
    } catch (error) {
      if ((error as { errcode?: number }).errcode === 1555) throw conflict();
      throw error;
    }
    return { headSeq: newHead };
  }

  return {
    ...correct,

    async append(sessionId, given) {
      const input = LIVE_INPUT_FLAWS.has(flaw) ? given : snapshotInput(given);
      validateAppendInput(sessionId, input, correct.limits);
      switch (flaw) {
        case 'split-null':
        case 'split-head':
          return splitAppend(sessionId, input);
        case 'no-seq-check':
        case 'no-snapshot':
        case 'fence-live-only':
          return transaction(() => write(sessionId, input, check(sessionId, input)));
        case 'check-outside-txn': {
          // The check, as autocommit reads …
          const head = check(sessionId, input);
          // … then the write, in a transaction of its own that trusts it.
          return transaction(() => write(sessionId, input, head, true));
        }
        case 'write-behind': {
          const answer = behind.then(() => transaction(() => check(sessionId, input)));
          behind = answer
            .then(() => new Promise((resolve) => setTimeout(resolve, 2)))
            .then(() => correct.append(sessionId, input))
            .catch(() => {});
          return { headSeq: (await answer) + input.messages.length };
        }
        case 'nul-refused':
          if (hasNul(input.messages) || hasNul(input.session)) {
            // What node-postgres reports for a text column or a jsonb value holding U+0000.
            throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
              code: '22021',
            });
          }
          return correct.append(sessionId, input);
        case 'stale-cache':
          cache.delete(sessionId);
          return correct.append(sessionId, input);
        default:
          return correct.append(sessionId, input);
      }
    },

    async load(sessionId, options = {}) {
      if (flaw === 'write-behind') await behind; // read-your-writes, in this instance only
      if (flaw === 'nul-cut' || flaw === 'nul-id-cut') {
        const loaded = await correct.load(sessionId, options);
        const field = flaw === 'nul-cut' ? 'content' : 'id';
        return (
          loaded && {
            ...loaded,
            messages: loaded.messages.map((m) => ({ ...m, [field]: m[field].split('\u0000')[0] ?? '' })),
          }
        );
      }
      if (flaw === 'proto-assign') {
        const loaded = await correct.load(sessionId, options);
        return loaded && (JSON.parse(JSON.stringify(loaded), plainObjects) as LoadResult);
      }
      if (flaw !== 'stale-cache') return correct.load(sessionId, options);
      validateSessionId(sessionId);
      validateLoadOptions(options);
      const afterSeq = options.afterSeq ?? 0;
      const hit = cache.get(sessionId)?.get(afterSeq);
      if (hit) return structuredClone(hit);
      const fresh = await correct.load(sessionId, options);
      if (fresh) {
        if (!cache.has(sessionId)) cache.set(sessionId, new Map());
        cache.get(sessionId)?.set(afterSeq, structuredClone(fresh));
      }
      return fresh;
    },

    async acquireLease(sessionId, given) {
      const input = snapshotInput(given);
      validateAcquireLeaseInput(sessionId, input);
      cache.delete(sessionId);
      // A loose collation lets a variant of the owner through: the grant then runs as the owner.
      const owner = looseOwner.get(sessionId, input.init.ownerId, input.init.tenantId) as
        | { owner_id: string | null; tenant_id: string | null }
        | undefined;
      const init = owner ? { ...input.init, ownerId: owner.owner_id, tenantId: owner.tenant_id } : input.init;
      return correct.acquireLease(sessionId, { ...input, init });
    },

    renewLease: cached(correct.renewLease),
    releaseLease: cached(correct.releaseLease),
    deleteSession: cached(correct.deleteSession),

    async listSessions(input) {
      const { ownerId, tenantId, agentName, limit, cursor } = input;
      validateListSessionsInput(input);
      const where: string[] = [];
      const params: SQLInputValue[] = [];
      for (const [column, value] of [
        ['owner_id', ownerId],
        ['tenant_id', tenantId],
        ['agent_name', agentName],
      ] as const) {
        if (value === undefined) continue;
        where.push(`${column} = ? COLLATE ${listCollation}`);
        params.push(value);
      }
      if (cursor) {
        where.push('id > ?');
        params.push(cursor);
      }
      const rows = db
        .prepare(
          `SELECT * FROM agent_sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ?`,
        )
        .all(...params, limit + 1) as unknown as Row[];
      const page = rows.slice(0, limit).map(decodeSessionColumns);
      return { sessions: page, nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
    },

    async deleteIdleSessions(input) {
      if (flaw !== 'retention-client-clock') return correct.deleteIdleSessions(input);
      const { idleBefore, limit, cursor } = validateRetentionInput(input);
      const [afterAt, afterId] = cursor === null ? ['', ''] : decodeRetentionCursor<string>(cursor, 'string');
      return transaction(() => {
        const candidates = db
          .prepare(
            `SELECT id, updated_at FROM agent_sessions WHERE updated_at < ? AND (updated_at, id) > (?, ?)
             ORDER BY updated_at, id LIMIT ?`,
          )
          .all(idleBefore, afterAt, afterId, limit) as { id: string; updated_at: string }[];
        // The mistake: lease liveness judged by this process's clock.
        const now = new Date().toISOString();
        const deleted: string[] = [];
        for (const { id } of candidates) {
          const gone = db
            .prepare(
              `DELETE FROM agent_sessions WHERE id = ? AND updated_at < ?
               AND (lease_holder IS NULL OR lease_expires_at <= ?)`,
            )
            .run(id, idleBefore, now);
          if (gone.changes === 0) continue;
          db.prepare('DELETE FROM agent_messages WHERE session_id = ?').run(id);
          deleted.push(id);
        }
        const last = candidates.at(-1);
        return {
          deleted,
          nextCursor:
            candidates.length === limit && last ? encodeRetentionCursor(last.updated_at, last.id) : null,
        };
      });
    },

    async close() {
      await behind;
      db.close();
      await correct.close();
    },
  };
}

/** check-outside-txn: messages keyed by a rowid, with a non-unique index on (session_id, seq). */
function createRowidTables(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(`
    PRAGMA journal_mode = WAL;
    CREATE TABLE IF NOT EXISTS agent_messages (
      row_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
      id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, meta TEXT NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS agent_messages_seq ON agent_messages (session_id, seq);
  `);
  db.close();
}

/** A fresh database file, removed when this process exits. */
function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-split-store-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'agent.db');
}

/** The broken store as a conformance target on a node:sqlite file, reopenable by child processes. */
export function splitTarget(options: { path?: string; flaw: SplitFlaw }): ConformanceTarget {
  let path = options.path;
  if (!path && options.flaw === 'check-outside-txn') {
    path = freshPath();
    createRowidTables(path);
  }
  const base = nodeSqliteTarget(path ? { path } : {});
  const opened = String(base.reopen?.path);
  return {
    ...base,
    name: `broken store (${options.flaw})`,
    reopen: { path: opened, flaw: options.flaw },
    createStore: () => splitStore(opened, options.flaw),
  };
}
