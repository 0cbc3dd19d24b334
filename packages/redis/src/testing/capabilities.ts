import type { MessageRecord } from '@agentstore/core';
import type { RawMessageRow, RawSessionRow, StoreCapabilities } from '@agentstore/core/testing';
import type { Cluster, Redis } from 'ioredis';

/**
 * The kit's capabilities, written against raw ioredis commands. Key names are derived here
 * independently of the adapter (same documented layout), so a wrong key scheme in the adapter
 * shows up as data the raw reader cannot find.
 */
export function redisKeys(prefix: string, sessionId: string) {
  const tag = Buffer.from(JSON.stringify(sessionId).slice(1, -1), 'utf8').toString('base64url');
  return { session: `${prefix}{${tag}}:s`, messages: `${prefix}{${tag}}:m` };
}

const parseJson = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));

/** The floor: the smallest correct guarded append a user would hand-write in Lua. */
export const FLOOR_LUA = `
if redis.call('HGET', KEYS[1], 'headSeq') ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 3))
redis.call('HSET', KEYS[1], 'headSeq', ARGV[2])
return 1
`;

/** `client` may be a getter, for suites that connect in `beforeAll` but declare their target earlier. */
export function redisCapabilities(
  clientOrGetter: Redis | Cluster | (() => Redis | Cluster),
  prefix: string,
): Required<StoreCapabilities> {
  const connection = () => (typeof clientOrGetter === 'function' ? clientOrGetter() : clientOrGetter);
  let floorSha: string | null = null;
  const runFloor = async (keys: string[], args: string[]): Promise<unknown> => {
    const client = connection();
    floorSha ??= String(await client.script('LOAD', FLOOR_LUA));
    try {
      return await client.evalsha(floorSha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return client.eval(FLOOR_LUA, keys.length, ...keys, ...args);
    }
  };

  return {
    raw: {
      async session(sessionId): Promise<RawSessionRow | null> {
        const client = connection();
        const hash = await client.hgetall(redisKeys(prefix, sessionId).session);
        if (Object.keys(hash).length === 0) return null;
        return {
          id: parseJson(hash.id) as string,
          headSeq: Number(hash.headSeq),
          ownerId: parseJson(hash.ownerId) as string | null,
          tenantId: parseJson(hash.tenantId) as string | null,
          leaseHolder: hash.leaseHolder === undefined ? null : (parseJson(hash.leaseHolder) as string),
          leaseEpoch: Number(hash.leaseEpoch ?? 0),
        };
      },
      async messages(sessionId): Promise<RawMessageRow[]> {
        const stored = await connection().lrange(redisKeys(prefix, sessionId).messages, 0, -1);
        return stored.map((text, i) => {
          const m = JSON.parse(text) as MessageRecord;
          return { seq: i + 1, id: m.id, role: m.role, content: m.content };
        });
      },
    },
    async corrupt(sessionId, seq) {
      await connection().lset(redisKeys(prefix, sessionId).messages, seq - 1, '{"id": "broken", not json');
    },
    floor: {
      async append(sessionId, expectedSeq, messages) {
        const keys = redisKeys(prefix, sessionId);
        const done = await runFloor(
          [keys.session, keys.messages],
          [
            String(expectedSeq),
            String(expectedSeq + messages.length),
            ...messages.map((m) => JSON.stringify(m)),
          ],
        );
        if (Number(done) !== 1) throw new Error(`floor append: head seq is not ${expectedSeq}`);
      },
    },
  };
}
