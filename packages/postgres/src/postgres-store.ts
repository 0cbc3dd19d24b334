import {
  type AgentStore,
  CorruptRecordError,
  InvalidArgumentError,
  LeaseLostError,
  type MessageRecord,
  SessionAccessDeniedError,
  SessionBusyError,
  type StoreLimits,
  UnexpectedReplyError,
} from '@agentstore/core';
import {
  canAcquireLease,
  decodeRetentionCursor,
  defineStore,
  encodeRetentionCursor,
  newIncarnationId,
  ownerMatches,
  retryAfterMs,
} from '@agentstore/core/store';
import pg, { type Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import { checkout } from './checkout.ts';
import { translatePgError } from './errors.ts';
import { type MigrateResult, runMigrations } from './migrate.ts';
import { type PostgresStoreOptions, type PostgresStoreTarget, resolveOptions } from './options.ts';
import { isAppendRefusal, refusalError } from './refusal.ts';
import { decodeMessage, decodeSession, leaseOf, type SessionRow } from './rows.ts';
import { tableNames } from './schema.ts';
import { buildStatements } from './statements.ts';

/**
 * 4 MiB per message (measured by `messageByteLength`), at most 64 messages per append: the
 * messages travel as one JSON parameter, and 64 × 4 MiB = 256 MiB stays well inside both
 * PostgreSQL's 1 GiB field limit and V8's largest string.
 */
export const POSTGRES_LIMITS: StoreLimits = { maxMessageBytes: 4 * 1024 * 1024, maxMessagesPerAppend: 64 };

export interface PostgresStore extends AgentStore {
  /** Creates or upgrades the tables; idempotent and safe to run from several processes at once. */
  migrate(): Promise<MigrateResult>;
  /** The pool queries go through: yours, or the one the store opened for `connectionString`. */
  readonly pool: Pool;
}

interface LoadRow extends Omit<SessionRow, 'id' | 'state'> {
  /** 0 on the session row. */
  seq: string;
  body: string;
}

interface DeleteIdleRow {
  /** JSON array of the deleted ids. */
  deleted: string;
  examined: string;
  /** JSON [activity key, id] of the last candidate examined; null when none. */
  last: string | null;
}

type AcquireRow = { [K in keyof SessionRow]: SessionRow[K] | null } & {
  prior_found: boolean | null;
  prior_owner_id: string | null;
  prior_tenant_id: string | null;
  prior_lease_holder: string | null;
  prior_lease_expires_at: string | null;
  /** The server's clock when the statement ran (ISO). */
  server_now: string;
};

/** FNV-1a, so a statement's name changes whenever its text does (schema, prefix, version). */
function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * PostgreSQL `text` cannot hold U+0000. Message content and state travel inside JSON (where NUL
 * is escaped), but these fields are columns of their own, so NUL is refused before any write.
 */
function assertNoNul(argument: string, value: string | null | undefined): void {
  if (typeof value === 'string' && value.includes('\u0000')) {
    throw new InvalidArgumentError({ argument, reason: 'must not contain NUL characters (PostgreSQL text)' });
  }
}

/** A lost race between this statement's snapshot and a concurrent writer; retried a few times. */
const ACQUIRE_ATTEMPTS = 3;

/**
 * The PostgreSQL store. Every operation except `deleteSession` and `migrate` is a single
 * statement sent in one round trip; `append` is atomic and guarded by head seq and lease epoch.
 */
export function postgresStore(
  target: PostgresStoreTarget,
  options: PostgresStoreOptions = {},
): PostgresStore {
  const { schema, tablePrefix, preparedStatements } = resolveOptions(options);
  let pool: Pool;
  let ownsPool = false;
  if (target && 'pool' in target && target.pool) {
    pool = target.pool;
  } else if (target && 'connectionString' in target && typeof target.connectionString === 'string') {
    pool = new pg.Pool({ connectionString: target.connectionString });
    ownsPool = true;
    // An idle connection dropped by the server (restart, failover) must not crash the process;
    // the pool replaces it on the next query.
    pool.on('error', () => {});
  } else {
    throw new InvalidArgumentError({
      argument: 'target',
      reason: 'must be { pool } or { connectionString }',
    });
  }

  const names = tableNames(schema, tablePrefix);
  const sql = buildStatements(names);
  const limits = { ...POSTGRES_LIMITS };
  const statementNames = new Map<string, string>();
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
  };

  /** One round trip. Named statements are parsed once per connection by pg's client. */
  function query<R extends QueryResultRow>(
    text: string,
    values: unknown[],
    client: Pool | PoolClient = pool,
  ) {
    if (!preparedStatements) return client.query<R>({ text, values });
    let name = statementNames.get(text);
    if (name === undefined) {
      name = `agentstore_${hashText(text)}`;
      statementNames.set(text, name);
    }
    return client.query<R>({ name, text, values });
  }

  /**
   * One round trip on a client of our own, for a statement that raises on purpose: `pool.query()`
   * destroys the connection of every query that errs, so an expected error (`kept`) returns the
   * client intact and any other destroys it, as `pool.query()` would.
   */
  async function queryOwnClient(text: string, values: unknown[], kept: (error: unknown) => boolean) {
    const own = await checkout(pool);
    let failure: unknown;
    try {
      return await query(text, values, own.client);
    } catch (error) {
      failure = kept(error) ? undefined : error;
      throw error;
    } finally {
      own.release(failure);
    }
  }

  // Every input reaches these methods checked and copied by core's boundary.
  return defineStore(
    {
      durable: true,
      limits,
      pool,

      async migrate() {
        assertOpen();
        return runMigrations(pool, names, schema, tablePrefix);
      },

      async load(sessionId, { afterSeq }) {
        assertOpen();
        const { rows } = await query<LoadRow>(sql.load, [sessionId, afterSeq]);
        // Rows come in no particular order (the server never sorts): the session row is seq 0, and
        // each message goes to its own slot, so the result is ordered in one pass.
        const sessionRow = rows.find((row) => Number(row.seq) === 0);
        if (!sessionRow) return null;
        const session = decodeSession({ ...sessionRow, id: sessionId, state: sessionRow.body });
        const messages: MessageRecord[] = new Array(Math.max(0, session.headSeq - afterSeq));
        for (const row of rows) {
          const seq = Number(row.seq);
          if (seq === 0 || seq > session.headSeq) continue;
          messages[seq - afterSeq - 1] = decodeMessage(row.body, sessionId, seq);
        }
        for (let i = 0; i < messages.length; i++) {
          if (messages[i] === undefined) {
            throw new CorruptRecordError({ sessionId, seq: afterSeq + i + 1, reason: 'message is missing' });
          }
        }
        return { session, messages };
      },

      // `encoded`: each message's JSON, as the size limit measured it; the array below is built from these.
      async append(sessionId, input, encoded) {
        assertOpen();
        const { expectedSeq, lease } = input;
        const init = input.session?.init;
        const state = input.session?.state;
        assertNoNul('lease.holder', lease?.holder);
        // init is used (and stored) only by a first append.
        if (init && expectedSeq === 0) {
          assertNoNul('session.init.agentName', init.agentName);
          assertNoNul('session.init.ownerId', init.ownerId);
          assertNoNul('session.init.tenantId', init.tenantId);
        }
        // Everything is serialised before the query, so a bad value fails before any I/O.
        const values: unknown[] = [
          sessionId,
          expectedSeq,
          lease?.holder ?? null,
          lease?.epoch ?? null,
          state === undefined ? null : JSON.stringify(state),
          input.releaseLease === true,
          // One message (what run() writes) is bound as its JSON; several as one JSON array.
          encoded.length === 1 ? encoded[0] : `[${encoded.join(',')}]`,
          encoded.length,
        ];
        // Only a first append can create the session; later ones skip that part of the statement.
        if (expectedSeq === 0) {
          values.push(
            init?.agentName ?? '',
            init?.ownerId ?? null,
            init?.tenantId ?? null,
            JSON.stringify(init?.state ?? null),
            newIncarnationId(),
          );
        }
        // Granted: every message inserted (validation ensures at least one), no row to parse.
        // Refused: the statement raised APPEND_REFUSED with what it saw, and wrote nothing.
        let result: QueryResult;
        try {
          const statements = expectedSeq === 0 ? sql.appendFirst : sql.append;
          result = await queryOwnClient(
            encoded.length === 1 ? statements.one : statements.many,
            values,
            isAppendRefusal,
          );
        } catch (error) {
          if (isAppendRefusal(error))
            throw refusalError(error.detail, { sessionId, expectedSeq, lease: lease ?? null });
          throw error;
        }
        if (result.rowCount === input.messages.length)
          return { headSeq: expectedSeq + input.messages.length };
        throw new UnexpectedReplyError({
          store: '@agentstore/postgres',
          operation: 'append',
          reply: { rowCount: result.rowCount },
          sessionId,
        });
      },

      async acquireLease(sessionId, { holder, ttlMs, init }) {
        assertOpen();
        assertNoNul('holder', holder);
        assertNoNul('init.agentName', init.agentName);
        assertNoNul('init.ownerId', init.ownerId);
        assertNoNul('init.tenantId', init.tenantId);
        const wanted = { ...init, ownerId: init.ownerId ?? null, tenantId: init.tenantId ?? null };
        const stateJson = JSON.stringify(init.state ?? null);
        for (let attempt = 1; ; attempt++) {
          const { rows } = await query<AcquireRow>(sql.acquire, [
            sessionId,
            init.agentName ?? '',
            wanted.ownerId,
            wanted.tenantId,
            stateJson,
            holder,
            ttlMs,
            newIncarnationId(),
          ]);
          const row = rows[0];
          if (!row) {
            throw new UnexpectedReplyError({
              store: '@agentstore/postgres',
              operation: 'acquireLease',
              reply: rows,
              sessionId,
            });
          }
          if (row.id !== null) {
            const session = decodeSession(row as SessionRow);
            return { epoch: Number(row.lease_epoch), session };
          }
          if (row.prior_found) {
            if (!ownerMatches({ ownerId: row.prior_owner_id, tenantId: row.prior_tenant_id }, wanted)) {
              throw new SessionAccessDeniedError({ sessionId });
            }
            const held = leaseOf(row.prior_lease_holder, 0, row.prior_lease_expires_at);
            const now = Date.parse(row.server_now);
            if (held && !canAcquireLease(held, holder, now)) {
              throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(held, now) });
            }
          }
          // The row changed after this statement's snapshot (created or leased concurrently).
          if (attempt >= ACQUIRE_ATTEMPTS) throw new SessionBusyError({ sessionId, retryAfterMs: 1 });
        }
      },

      async renewLease(sessionId, { holder, epoch, ttlMs }) {
        assertOpen();
        // A holder that cannot be stored cannot hold the lease either.
        if (typeof holder !== 'string' || holder.includes('\u0000') || !Number.isSafeInteger(epoch)) {
          throw new LeaseLostError({ sessionId, holder: typeof holder === 'string' ? holder : null, epoch });
        }
        const { rows } = await query<{ lease_expires_at: string }>(sql.renew, [
          sessionId,
          holder,
          epoch,
          ttlMs,
        ]);
        if (!rows[0]) throw new LeaseLostError({ sessionId, holder, epoch });
        return { expiresAt: rows[0].lease_expires_at };
      },

      async releaseLease(sessionId, { holder, epoch }) {
        assertOpen();
        if (typeof holder !== 'string' || holder.includes('\u0000') || !Number.isSafeInteger(epoch)) {
          return { released: false };
        }
        const result = await query(sql.release, [sessionId, holder, epoch]);
        return { released: result.rowCount === 1 };
      },

      async listSessions({ ownerId, tenantId, agentName, limit, cursor }) {
        assertOpen();
        // No stored session has NUL in these fields (it is refused on write), so nothing matches.
        if (
          [ownerId, tenantId, agentName].some(
            (value) => typeof value === 'string' && value.includes('\u0000'),
          )
        ) {
          return { sessions: [], nextCursor: null };
        }
        if (typeof cursor === 'string' && cursor.includes('\u0000')) {
          throw new InvalidArgumentError({
            argument: 'cursor',
            reason: 'is not a cursor this store returned',
          });
        }
        const page = sql.list({ limit, ownerId, tenantId, agentName, cursor: cursor ?? undefined });
        const { rows } = await query<SessionRow>(page.text, page.values);
        const sessions = rows.slice(0, limit).map(decodeSession);
        return { sessions, nextCursor: rows.length > limit ? sessions[sessions.length - 1]!.id : null };
      },

      async deleteSession(sessionId) {
        assertOpen();
        // Two statements in one short transaction: the session row first (waiting out any append
        // in flight), then its messages under a fresh snapshot that sees everything committed.
        const own = await checkout(pool);
        const { client } = own;
        let broken: unknown;
        try {
          await client.query('BEGIN');
          try {
            const deleted = await query(sql.deleteSession, [sessionId], client);
            await query(sql.deleteMessages, [sessionId], client);
            await client.query('COMMIT');
            return { deleted: deleted.rowCount === 1 };
          } catch (error) {
            await client.query('ROLLBACK').catch((rollbackError: unknown) => {
              broken = rollbackError;
            });
            throw error;
          }
        } finally {
          own.release(broken);
        }
      },

      async deleteIdleSessions({ idleBefore, limit, cursor }) {
        assertOpen();
        const [afterKey, afterId] =
          cursor === null ? ['', ''] : decodeRetentionCursor<string>(cursor, 'string');
        if (afterId.includes('\u0000') || afterKey.includes('\u0000')) {
          throw new InvalidArgumentError({
            argument: 'cursor',
            reason: 'is not a cursor this store returned',
          });
        }
        const { rows } = await query<DeleteIdleRow>(sql.deleteIdle, [idleBefore, limit, afterKey, afterId]);
        const row = rows[0];
        if (!row)
          throw new UnexpectedReplyError({
            store: '@agentstore/postgres',
            operation: 'deleteIdleSessions',
            reply: rows,
          });
        const last = row.last === null ? null : (JSON.parse(row.last) as [string, string]);
        return {
          deleted: JSON.parse(row.deleted) as string[],
          nextCursor: Number(row.examined) === limit && last ? encodeRetentionCursor(last[0], last[1]) : null,
        };
      },

      async close() {
        if (closed) return;
        closed = true;
        if (ownsPool) await pool.end();
      },
    },
    { mapError: (error) => translatePgError(error, { schema, preparedStatements }) },
  );
}
