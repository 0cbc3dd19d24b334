import {
  type AgentStore,
  InvalidArgumentError,
  LeaseLostError,
  SchemaMissingError,
  SessionAccessDeniedError,
  SessionBusyError,
  UnexpectedReplyError,
} from '@agentstore/core';
import {
  decodeRetentionCursor,
  defineStore,
  encodeRetentionCursor,
  newIncarnationId,
  ownerMatches,
  retryAfterMs,
} from '@agentstore/core/store';
import {
  decodeSqliteMessage,
  decodeSqliteSession,
  SQLITE_SESSION_COLUMNS,
  type SqliteMessageRow,
  type SqliteSessionRow,
  type SqliteTableNames,
  sqliteLeaseFree,
  sqliteNowIso,
  sqliteSelectMessagesSql,
  sqliteSelectSessionSql,
  sqliteTableNames,
} from '@agentstore/sqlite-dialect';
import { appendFailure, appendStatements } from './append-batch.ts';
import type { D1DatabaseLike } from './d1-binding.ts';
import { D1_STORE_LIMITS } from './limits.ts';
import { migrateSchema } from './schema.ts';
import { withStatementCache } from './statement-cache.ts';

export interface D1StoreConnection {
  /** The D1 binding, e.g. `env.DB`. The store never closes it. */
  binding: D1DatabaseLike;
}

export interface D1StoreOptions {
  /** Prefix of the three table names (default `agentstore_`): a letter, then letters, digits, `_`. */
  tablePrefix?: string;
}

export interface D1AgentStore extends AgentStore {
  /** Creates the tables when missing; idempotent. Run it once at deploy time or on first use. */
  migrate(): Promise<{ version: number }>;
  /** The table names this store uses. */
  readonly tables: Readonly<SqliteTableNames>;
}

/**
 * An `AgentStore` on Cloudflare D1. Every append is one `batch()` (one round trip, one
 * transaction) whose guard statement fails the batch when the head seq or the lease epoch moved.
 * Runs in Workers and Durable Objects; it uses no Node API.
 */
export function d1Store(connection: D1StoreConnection, options: D1StoreOptions = {}): D1AgentStore {
  const binding = connection?.binding;
  if (!binding || typeof binding.prepare !== 'function' || typeof binding.batch !== 'function') {
    throw new InvalidArgumentError({ argument: 'binding', reason: 'must be a D1 database binding (env.DB)' });
  }
  const db = withStatementCache(binding);
  const t = sqliteTableNames(options.tablePrefix);
  const limits = { ...D1_STORE_LIMITS };
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
  };

  const selectSession = (sessionId: string) =>
    db.prepare(sqliteSelectSessionSql(t, { sessionId: '?1' })).bind(sessionId);

  // Every input reaches these methods checked and copied by core's boundary.
  const store = defineStore(
    {
      durable: true,
      limits,
      tables: t,

      migrate: () => migrateSchema(db, t),

      async load(sessionId, { afterSeq }) {
        assertOpen();
        // One batch is one round trip and one transaction: the session and its messages agree.
        const [sessions, messages] = await db.batch<SqliteSessionRow | SqliteMessageRow>([
          selectSession(sessionId),
          db
            .prepare(sqliteSelectMessagesSql(t, { sessionId: '?1', afterSeq: '?2' }))
            .bind(sessionId, afterSeq),
        ]);
        const row = sessions?.results[0] as SqliteSessionRow | undefined;
        if (!row) return null;
        const session = decodeSqliteSession(row);
        return {
          session,
          messages: ((messages?.results ?? []) as SqliteMessageRow[]).map((m) =>
            decodeSqliteMessage(sessionId, m),
          ),
        };
      },

      async append(sessionId, input, bodies) {
        assertOpen();
        try {
          await db.batch(appendStatements(db, t, sessionId, input, bodies));
        } catch (error) {
          throw appendFailure(error, sessionId, input);
        }
        return { headSeq: input.expectedSeq + input.messages.length };
      },

      async acquireLease(sessionId, { holder, ttlMs, init }) {
        assertOpen();
        // The grant happens only for the same owner and tenant and a lease that is free, expired (by
        // the database's clock) or already this holder's; the row read after it (same transaction)
        // tells which case it was, and the clock read with it gives retryAfterMs on that clock.
        const [, after, clock] = await db.batch<SqliteSessionRow & { now: string }>([
          db
            .prepare(
              `INSERT INTO ${t.sessions} (id, agent_name, owner_id, tenant_id, state, head_seq,
               lease_holder, lease_epoch, lease_expires_at, created_at, updated_at, incarnation_id)
             VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, 1, ${sqliteNowIso('?7')}, ${sqliteNowIso()}, ${sqliteNowIso()}, ?8)
             ON CONFLICT (id) DO UPDATE SET
               lease_holder = excluded.lease_holder,
               lease_epoch = lease_epoch + 1,
               lease_expires_at = excluded.lease_expires_at
             WHERE owner_id IS excluded.owner_id AND tenant_id IS excluded.tenant_id
               AND (${sqliteLeaseFree({ now: sqliteNowIso() })} OR lease_holder = excluded.lease_holder)`,
            )
            .bind(
              sessionId,
              init.agentName,
              init.ownerId,
              init.tenantId,
              JSON.stringify(init.state ?? null),
              holder,
              ttlMs,
              // Kept only if this acquire creates the session.
              newIncarnationId(),
            ),
          selectSession(sessionId),
          db.prepare(`SELECT ${sqliteNowIso()} AS now`),
        ]);
        const row = after?.results[0];
        if (!row)
          throw new UnexpectedReplyError({
            store: '@agentstore/d1',
            operation: 'acquireLease',
            reply: 'no session row after the lease upsert',
            sessionId,
          });
        const session = decodeSqliteSession(row);
        if (!ownerMatches(session, init)) throw new SessionAccessDeniedError({ sessionId });
        if (!session.lease || session.lease.holder !== holder) {
          throw new SessionBusyError({
            sessionId,
            retryAfterMs: session.lease
              ? retryAfterMs(session.lease, Date.parse(clock?.results[0]?.now ?? ''))
              : 1,
          });
        }
        return { epoch: session.lease.epoch, session };
      },

      async renewLease(sessionId, { holder, epoch, ttlMs }) {
        assertOpen();
        const { results } = await db
          .prepare(
            `UPDATE ${t.sessions} SET lease_expires_at = ${sqliteNowIso('?1')}
           WHERE id = ?2 AND lease_holder = ?3 AND lease_epoch = ?4 RETURNING lease_expires_at`,
          )
          .bind(ttlMs, sessionId, holder, epoch)
          .all<{ lease_expires_at: string }>();
        if (results.length === 0) throw new LeaseLostError({ sessionId, holder, epoch });
        return { expiresAt: results[0]!.lease_expires_at };
      },

      async releaseLease(sessionId, { holder, epoch }) {
        assertOpen();
        const { results } = await db
          .prepare(
            `UPDATE ${t.sessions} SET lease_holder = NULL, lease_expires_at = NULL
           WHERE id = ?1 AND lease_holder = ?2 AND lease_epoch = ?3 RETURNING id`,
          )
          .bind(sessionId, holder, epoch)
          .all();
        return { released: results.length > 0 };
      },

      async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
        assertOpen();
        const where: string[] = [];
        const values: unknown[] = [];
        const filter = (column: string, value: unknown) => {
          values.push(value);
          where.push(`${column} ?${values.length}`);
        };
        if (ownerId !== undefined) filter('owner_id IS', ownerId);
        if (tenantId !== undefined) filter('tenant_id IS', tenantId);
        if (agentName !== undefined) filter('agent_name IS', agentName);
        if (cursor != null) filter('id >', cursor);
        values.push(limit + 1);
        const { results } = await db
          .prepare(
            `SELECT ${SQLITE_SESSION_COLUMNS} FROM ${t.sessions}
           ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ?${values.length}`,
          )
          .bind(...values)
          .all<SqliteSessionRow>();
        const page = results.slice(0, limit).map(decodeSqliteSession);
        return { sessions: page, nextCursor: results.length > limit ? page[page.length - 1]!.id : null };
      },

      async deleteSession(sessionId) {
        assertOpen();
        const [, deleted] = await db.batch([
          db.prepare(`DELETE FROM ${t.messages} WHERE session_id = ?1`).bind(sessionId),
          db.prepare(`DELETE FROM ${t.sessions} WHERE id = ?1 RETURNING id`).bind(sessionId),
        ]);
        return { deleted: (deleted?.results.length ?? 0) > 0 };
      },

      async deleteIdleSessions({ idleBefore, limit, cursor }) {
        assertOpen();
        const [afterAt, afterId] =
          cursor === null ? ['', ''] : decodeRetentionCursor<string>(cursor, 'string');
        // One batch, one transaction: the page of candidates from the activity index, then the idle
        // and unleased ones among them lose their messages and their row. D1 runs the batch alone,
        // so both deletes see the same candidates and no append can land in between.
        const candidates = (columns: string) => `SELECT ${columns} FROM ${t.sessions}
        WHERE updated_at < ?1 AND (updated_at, id) > (?2, ?3) ORDER BY updated_at, id LIMIT ?4`;
        const idle = `id IN (${candidates('id')}) AND updated_at < ?1
        AND ${sqliteLeaseFree({ now: sqliteNowIso() })}`;
        const values = [idleBefore, afterAt, afterId, limit];
        const [page, , gone] = await db.batch<{ id: string; updated_at: string }>([
          db.prepare(candidates('id, updated_at')).bind(...values.slice(0, 4)),
          db
            .prepare(
              `DELETE FROM ${t.messages} WHERE session_id IN (SELECT id FROM ${t.sessions} WHERE ${idle})`,
            )
            .bind(...values),
          db.prepare(`DELETE FROM ${t.sessions} WHERE ${idle} RETURNING id`).bind(...values),
        ]);
        const examined = page?.results ?? [];
        const last = examined[examined.length - 1];
        return {
          deleted: (gone?.results ?? []).map((row) => row.id),
          nextCursor:
            examined.length === limit && last ? encodeRetentionCursor(last.updated_at, last.id) : null,
        };
      },

      async close() {
        // The binding belongs to the Worker; there is nothing of ours to release.
        closed = true;
      },
    },
    { mapError: schemaMissing },
  );
  return store;
}

/** D1 reports a missing table as `no such table: <name>` inside its own error text. */
function schemaMissing(error: unknown): unknown {
  const table = /no such table: ([A-Za-z0-9_]+)/.exec(error instanceof Error ? error.message : '')?.[1];
  if (table === undefined) return error;
  return new SchemaMissingError(
    {
      store: '@agentstore/d1',
      missing: `table ${table}`,
      fix: 'call `await store.migrate()` once before the first run (idempotent: at Worker start-up, or in a deploy script), or apply `schemaStatements()` as a D1 migration with wrangler.',
    },
    { cause: error },
  );
}
