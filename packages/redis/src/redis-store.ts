import { randomBytes } from 'node:crypto';
import {
  type AgentStore,
  CorruptRecordError,
  InvalidArgumentError,
  LeaseLostError,
  type MessageRecord,
  SeqConflictError,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionInit,
  type SessionRecord,
  StoreConfigurationError,
  type StoreLimits,
  UnexpectedReplyError,
} from '@agentstore/core';
import { defineStore, newIncarnationId, validateTtlMs } from '@agentstore/core/store';
import { type Cluster, Redis } from 'ioredis';
import { decodeMessage, decodeSession, encodeMessage, fieldsOf } from './codec.ts';
import {
  blockingWarnings,
  checkDurability,
  type DurabilityReport,
  type RedisDurability,
  type RedisStoreWarning,
} from './durability-check.ts';
import {
  addToIndexes,
  deleteIdleSessions,
  type IndexContext,
  indexedFields,
  listSessions,
  reindexLegacy,
  removeFromIndexes,
} from './index-ops.ts';
import { bucketOf, indexKeys } from './indexes.ts';
import { DEFAULT_KEY_PREFIX, indexMember, keySpace, validateKeyPrefix } from './keys.ts';
import { scriptRunner } from './script-runner.ts';

export type RedisConnection =
  /** A client you own: the store never closes it. A `Cluster` client works as is. */
  | { client: Redis | Cluster }
  /** The store opens (and on `close()` quits) its own client. */
  | { url: string };

export interface RedisStoreOptions {
  /** Prepended to every key; must match /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/. Default `agentstore:`. */
  keyPrefix?: string;
  /** Expire a session's keys this many seconds after its last append or lease call. Default: never. */
  ttlSeconds?: number;
  /**
   * Called once per problem found by a durability check (each one, re-checks too). Default:
   * `console.warn`. It must not throw: a throw fails the lease call that ran the check, and from
   * the periodic re-check (`recheckIntervalMs`), which no call awaits, becomes an unhandled rejection.
   */
  onWarning?: (warning: RedisStoreWarning) => void;
  /**
   * What the server must guarantee before the store takes a lease (and so before `run()` does
   * anything): `fsync-always` (default: `appendonly yes` + `appendfsync always` on every node),
   * `fsync-everysec` (also accepts `everysec`: a Redis crash loses nothing, a machine crash up to
   * about 1 s), or `accept-loss` (your explicit opt-in: runs proceed whatever the server does,
   * problems still go to `onWarning`). A store whose server falls short has `durable: false`.
   */
  durability?: RedisDurability;
  /**
   * Check the server's persistence with `CONFIG GET append*` at start and every
   * `recheckIntervalMs`. Default true. `false` skips every check: you vouch for the server (e.g.
   * a managed Redis that forbids CONFIG but persists every write), and the store claims durability.
   */
  checkDurability?: boolean;
  /** How often the durability check runs again (a server reconfigured, a failover). Default 60 000 ms. */
  recheckIntervalMs?: number;
}

export interface RedisAgentStore extends AgentStore {
  /** Settles when the start-up durability check is done (never rejects); warnings went to `onWarning`. */
  readonly durabilityCheck: Promise<DurabilityReport>;
  /** Runs the durability check now (as the periodic re-check does) and updates `durable`. */
  recheckDurability(): Promise<DurabilityReport>;
  /**
   * Moves sessions listed by the single `<prefix>sessions` index of @agentstore/redis before
   * 0.2 into the bucketed indexes. Run it once after upgrading (safe to repeat, safe while the
   * store is in use); until then those sessions are missing from listings and retention.
   */
  reindex(): Promise<{ reindexed: number }>;
}

/**
 * 1 MiB per message and 500 per append keep one append under Redis' 512 MB bulk-argument and
 * 1 GB query-buffer limits with room to spare.
 */
export const REDIS_LIMITS: StoreLimits = { maxMessageBytes: 1024 * 1024, maxMessagesPerAppend: 500 };

/**
 * How often an acquire asks an unreachable node again (or the recheck interval, if shorter). An
 * unreachable node serves no writes; the short interval bounds how long one that comes back
 * with weaker persistence can take writes before the store notices.
 */
const UNREACHABLE_RECHECK_MS = 1000;

/** Unique per append() call across processes: a random process prefix and a counter. */
const APPEND_TOKEN_PREFIX = `${randomBytes(8).toString('base64url')}.`;
let appendCounter = 0;

const DEFAULT_INIT: SessionInit = { agentName: '', ownerId: null, tenantId: null, state: null };

function asTuple(reply: unknown): unknown[] {
  if (!Array.isArray(reply))
    throw new UnexpectedReplyError({ store: '@agentstore/redis', operation: 'script', reply });
  return reply;
}

function validateTtlSeconds(ttlSeconds: unknown): number {
  if (ttlSeconds === undefined) return 0;
  if (typeof ttlSeconds !== 'number' || !Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new InvalidArgumentError({ argument: 'ttlSeconds', reason: 'must be a positive integer' });
  }
  return ttlSeconds * 1000;
}

/** An AgentStore on Redis (standalone or Cluster) through ioredis. See the package README. */
export function redisStore(connection: RedisConnection, options: RedisStoreOptions = {}): RedisAgentStore {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  validateKeyPrefix(prefix);
  const ttl = String(validateTtlSeconds(options.ttlSeconds));
  const owned = !('client' in connection);
  const client: Redis | Cluster = 'client' in connection ? connection.client : new Redis(connection.url);
  const clientPrefix = client.options.keyPrefix ?? '';
  if (/[{}]/.test(clientPrefix)) {
    throw new InvalidArgumentError({
      argument: 'client.options.keyPrefix',
      reason: 'must not contain { or }',
    });
  }
  // A Lua script may touch keys of one Cluster slot only; on a standalone server the index
  // update rides inside the creating script, on a Cluster it is separate commands in between
  // the script's two runs (see createSession in scripts.ts).
  const isCluster = client.isCluster;
  const keys = keySpace(prefix);
  const scripts = scriptRunner(client);
  const limits = REDIS_LIMITS;
  const onWarning = options.onWarning ?? ((warning: RedisStoreWarning) => console.warn(warning.message));
  const required = options.durability ?? 'fsync-always';
  if (!['fsync-always', 'fsync-everysec', 'accept-loss'].includes(required)) {
    throw new InvalidArgumentError({
      argument: 'durability',
      reason: "must be 'fsync-always', 'fsync-everysec' or 'accept-loss'",
    });
  }
  const recheckMs = options.recheckIntervalMs ?? 60_000;
  validateTtlMs(recheckMs);
  let closed = false;
  if (owned) {
    // Our own client: a dropped connection must not print "Unhandled error event"; commands
    // still fail (and are retried by ioredis) on their own.
    client.on('error', () => {});
  }

  const checking = options.checkDurability !== false;
  let report: DurabilityReport | null = null;
  /** performance.now() when the last check settled: an unreachable node is asked again only later. */
  let checkedAt = Number.NEGATIVE_INFINITY;
  const unreachableRecheckMs = Math.min(UNREACHABLE_RECHECK_MS, recheckMs);
  let inFlight: Promise<DurabilityReport> | null = null;
  const recheckDurability = (): Promise<DurabilityReport> => {
    if (!checking) return Promise.resolve({ verified: false, warnings: [] });
    // Reset in finally: a throwing onWarning must not leave every later check failing with it.
    inFlight ??= checkDurability(client)
      .then((fresh) => {
        report = fresh;
        checkedAt = performance.now();
        if (!closed) for (const warning of fresh.warnings) onWarning(warning);
        return fresh;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  const durabilityCheck = recheckDurability();
  const recheckTimer = checking ? setInterval(() => void recheckDurability(), recheckMs) : null;
  recheckTimer?.unref?.();

  /** Why the store may not claim durability right now, with the fix; null when it may. */
  const durabilityProblem = () => {
    if (!checking || report === null) return null;
    const blocking = blockingWarnings(report, required);
    if (blocking.length === 0) return null;
    return {
      store: '@agentstore/redis',
      detail: `the server does not keep acknowledged appends through a crash: ${blocking.map((w) => w.message).join(' ')}`,
      fix:
        'run CONFIG SET appendonly yes and CONFIG SET appendfsync always on every node (then CONFIG REWRITE, or set them in redis.conf), ' +
        "or pass { durability: 'fsync-everysec' } or { durability: 'accept-loss' } to redisStore() to accept the risk; " +
        'for a managed Redis that forbids CONFIG but persists every write, pass { checkDurability: false }.',
    };
  };

  const assertOpen = () => {
    if (closed) throw new InvalidArgumentError({ argument: 'store', reason: 'is closed' });
  };

  const ix = indexKeys(prefix);

  /**
   * The script's keys: the session's two, plus, when it may create the session, every index it
   * joins (standalone) or its creation marker (Cluster, same slot as the session).
   */
  const scriptKeys = (sessionId: string, creating: SessionInit | null): string[] => {
    const k = keys.session(sessionId);
    if (creating === null) return [k.session, k.messages];
    if (isCluster) return [k.session, k.messages, k.creating];
    return [k.session, k.messages, ...ix.memberships(sessionId, creating), ix.activityKey(sessionId)];
  };

  /**
   * Cluster creation: the script answered {'INDEX'} (its marker is set), so the index members are
   * added, once, and the script runs again in 'done' mode. It answers {'INDEX'} again only if the
   * marker lapsed meanwhile (a caller stalled for a minute), which is bounded here.
   */
  const createIndexed = async (
    run: () => Promise<unknown[]>,
    setDone: () => void,
    sessionId: string,
    fields: Pick<SessionInit, 'agentName' | 'ownerId' | 'tenantId'>,
    now: number,
  ): Promise<unknown[]> => {
    let reply = await run();
    for (let attempt = 0; reply[0] === 'INDEX' && attempt < 3; attempt++) {
      await addToIndexes(indexContext, sessionId, fields, now);
      setDone();
      reply = await run();
    }
    return reply;
  };

  const loadRaw = async (sessionId: string, afterSeq: number, withMessages: boolean) => {
    const k = keys.session(sessionId);
    const reply = await scripts.load([k.session, k.messages], [afterSeq, withMessages ? '1' : '0']);
    if (reply === null) return null;
    const [sessionFlat, messages] = asTuple(reply);
    return { session: decodeSession(sessionId, fieldsOf(sessionFlat)), messages: asTuple(messages) };
  };

  const indexContext: IndexContext = {
    client,
    isCluster,
    inlineIndexStart: isCluster ? '' : `${clientPrefix}${prefix}ix:{`,
    keys,
    ix,
    scripts,
    loadSession: async (sessionId) => (await loadRaw(sessionId, 0, false))?.session ?? null,
  };

  // Every input reaches these methods checked and copied by core's boundary.
  return defineStore({
    /** False once a check found the server short of `durability`; re-checks can restore it. */
    get durable() {
      return durabilityProblem() === null;
    },
    get durabilityProblem() {
      return durabilityProblem();
    },
    limits,
    durabilityCheck,
    recheckDurability,

    async load(sessionId, { afterSeq }) {
      assertOpen();
      const raw = await loadRaw(sessionId, afterSeq, true);
      if (raw === null) return null;
      const expected = Math.max(0, raw.session.headSeq - afterSeq);
      const messages: MessageRecord[] = raw.messages.map((text, i) =>
        decodeMessage(sessionId, afterSeq + i + 1, text),
      );
      if (messages.length < expected) {
        // The list is shorter than headSeq says: report the first missing seq, never skip it.
        throw new CorruptRecordError({
          sessionId,
          seq: afterSeq + messages.length + 1,
          reason: 'message is missing',
        });
      }
      return { session: raw.session, messages };
    },

    async append(sessionId, input) {
      assertOpen();
      const now = Date.now();
      const { expectedSeq, lease } = input;
      const state = input.session?.state;
      // Only an append at seq 0 can create the session; later ones skip the creation arguments.
      const init = expectedSeq === 0 ? (input.session?.init ?? DEFAULT_INIT) : null;
      const args: (string | number)[] = [
        expectedSeq,
        now,
        // Kept only if this append creates the session.
        init ? newIncarnationId() : '',
        lease === null ? 'none' : 'token',
        lease === null ? '' : JSON.stringify(lease.holder),
        lease === null ? '' : lease.epoch,
        input.releaseLease ? '1' : '0',
        state === undefined ? '0' : '1',
        state === undefined ? '' : JSON.stringify(state),
        init ? JSON.stringify(init.agentName ?? '') : '',
        init ? JSON.stringify(init.ownerId ?? null) : '',
        init ? JSON.stringify(init.tenantId ?? null) : '',
        init ? JSON.stringify(init.state ?? null) : '',
        ttl,
        isCluster ? 'ask' : 'inline',
        init ? indexMember(sessionId) : '',
        init ? JSON.stringify(sessionId) : '',
        expectedSeq + input.messages.length,
        `${APPEND_TOKEN_PREFIX}${++appendCounter}`,
      ];
      for (let i = 0; i < input.messages.length; i++)
        args.push(encodeMessage(input.messages[i]!, expectedSeq + 1 + i));
      const k = scriptKeys(sessionId, init);
      const reply = await createIndexed(
        async () => asTuple(await scripts.append(k, args)),
        () => {
          args[14] = 'done';
        },
        sessionId,
        init ?? DEFAULT_INIT,
        now,
      );
      switch (reply[0]) {
        case 'OK':
          return { headSeq: Number(reply[1]) };
        case 'SEQ': {
          const actual = Number(reply[1]);
          throw new SeqConflictError({
            sessionId,
            expectedSeq: input.expectedSeq,
            actualSeq: Number.isSafeInteger(actual) ? actual : null,
          });
        }
        case 'LEASE':
          throw new LeaseLostError({
            sessionId,
            holder: input.lease?.holder ?? null,
            epoch: input.lease?.epoch ?? null,
          });
        default:
          throw new UnexpectedReplyError({
            store: '@agentstore/redis',
            operation: 'append',
            reply,
            sessionId,
          });
      }
    },

    async acquireLease(sessionId, { holder, ttlMs, init }) {
      assertOpen();
      // No run starts on a server whose persistence was never checked or fell short. A node that
      // could not be reached last time is asked again first, at most once per
      // UNREACHABLE_RECHECK_MS: each check asks every node, and a caller retrying in a loop
      // while a node is down must not turn every acquire into a round of CONFIG GETs.
      if (report === null) await durabilityCheck;
      if (
        (report as DurabilityReport | null)?.warnings.some((w) => w.code === 'NODE_UNREACHABLE') &&
        performance.now() - checkedAt >= unreachableRecheckMs
      ) {
        await recheckDurability();
      }
      const problem = durabilityProblem();
      if (problem) throw new StoreConfigurationError({ ...problem, problem: 'redis-not-durable' });
      if (typeof holder !== 'string')
        throw new InvalidArgumentError({ argument: 'holder', reason: 'must be a string' });
      if (typeof init !== 'object' || init === null) {
        throw new InvalidArgumentError({ argument: 'init', reason: 'must be an object' });
      }
      const now = Date.now();
      const fields = {
        agentName: init.agentName ?? '',
        ownerId: init.ownerId ?? null,
        tenantId: init.tenantId ?? null,
      };
      const k = scriptKeys(sessionId, { ...fields, state: null });
      const args: (string | number)[] = [
        JSON.stringify(holder),
        now,
        ttlMs,
        JSON.stringify(init.agentName ?? ''),
        JSON.stringify(init.ownerId ?? null),
        JSON.stringify(init.tenantId ?? null),
        JSON.stringify(init.state ?? null),
        // Kept only if this acquire creates the session.
        newIncarnationId(),
        ttl,
        isCluster ? 'ask' : 'inline',
        indexMember(sessionId),
        JSON.stringify(sessionId),
      ];
      const reply = await createIndexed(
        async () => asTuple(await scripts.acquire(k, args)),
        () => {
          args[9] = 'done';
        },
        sessionId,
        fields,
        now,
      );
      switch (reply[0]) {
        case 'OK': {
          const session: SessionRecord = decodeSession(sessionId, fieldsOf(reply[2]));
          return { epoch: Number(reply[1]), session };
        }
        case 'DENIED':
          throw new SessionAccessDeniedError({ sessionId });
        case 'BUSY':
          throw new SessionBusyError({ sessionId, retryAfterMs: Math.max(1, Number(reply[1])) });
        default:
          throw new UnexpectedReplyError({
            store: '@agentstore/redis',
            operation: 'acquireLease',
            reply,
            sessionId,
          });
      }
    },

    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      assertOpen();
      const k = keys.session(sessionId);
      const renewed = await scripts.renew(
        [k.session, k.messages],
        [JSON.stringify(holder), String(epoch), String(ttlMs), ttl],
      );
      const expiresMs = Number(renewed);
      if (expiresMs === 0) throw new LeaseLostError({ sessionId, holder, epoch });
      return { expiresAt: new Date(expiresMs).toISOString() };
    },

    async releaseLease(sessionId, { holder, epoch }) {
      assertOpen();
      const k = keys.session(sessionId);
      const released = await scripts.release(
        [k.session, k.messages],
        [JSON.stringify(holder), String(epoch), ttl],
      );
      return { released: Number(released) === 1 };
    },

    async listSessions(input) {
      assertOpen();
      return listSessions(indexContext, input);
    },

    async deleteSession(sessionId) {
      assertOpen();
      const k = keys.session(sessionId);
      // One script deletes the session's two keys (same slot, atomic) and, on a standalone
      // server, its index entries too: one round trip. On a Cluster the entries live in other
      // slots and follow from the fields it returns (put back if the id was re-created
      // meanwhile, see removeFromIndexes); a failure in between leaves entries that listings and
      // sweeps remove when they meet them.
      const reply = asTuple(
        await scripts.deleteSession(
          [k.session, k.messages],
          [indexContext.inlineIndexStart, bucketOf(sessionId), indexMember(sessionId)],
        ),
      );
      const stored = reply.slice(1).map((field) => (typeof field === 'string' ? field : null));
      if (isCluster && stored[0]) await removeFromIndexes(indexContext, sessionId, indexedFields(stored));
      return { deleted: Number(reply[0]) > 0 };
    },

    async reindex() {
      assertOpen();
      return reindexLegacy(indexContext);
    },

    async deleteIdleSessions(request) {
      assertOpen();
      return deleteIdleSessions(indexContext, request);
    },

    async close() {
      if (closed) return;
      closed = true;
      if (recheckTimer) clearInterval(recheckTimer);
      if (owned) await client.quit();
    },
  });
}
