// Append latency of redisStore against the hand-written floor on the same server, plus the
// WATCH/MULTI/EXEC alternative to the Lua script. 3 × 300-byte messages per append, each
// variant on its own sessions, variants interleaved round-robin so noise hits all alike.
// Run: pnpm --filter @agentstore/redis bench   (AOF always and AOF off; ~1 min)
import { compareVariants, formatVariants, machineLine, storeAndFloorVariants } from '@agentstore/bench';
import type { NewMessage } from '@agentstore/core';
import { launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { redisStore } from '../src/index.ts';
import { APPEND_LUA } from '../src/scripts.ts';
import { redisCapabilities, redisKeys } from '../src/testing/capabilities.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const WARMUP = 200;
const PREFIX = 'bench:';

const payload = 'x'.repeat(300);
let n = 0;
const batch = (): NewMessage[] =>
  Array.from({ length: 3 }, () => ({
    id: `m${++n}`,
    role: 'tool' as const,
    content: payload,
    createdAt: new Date().toISOString(),
  }));

/** The same guarded append as a WATCH/MULTI/EXEC transaction: read + check, then write. */
async function watchMultiAppend(conn: Redis, sessionId: string, expectedSeq: number, messages: NewMessage[]) {
  const keys = redisKeys(PREFIX, sessionId);
  // Round trip 1: WATCH + read the guard fields (pipelined). Round trip 2: MULTI … EXEC.
  const [, [, fields]] = (await conn
    .pipeline()
    .watch(keys.session)
    .hmget(keys.session, 'headSeq', 'leaseHolder', 'leaseExpiresMs')
    .exec()) as [unknown, [null, (string | null)[]]];
  const [head, holder, expires] = fields;
  if (Number(head ?? 0) !== expectedSeq || (holder && Number(expires) > Date.now())) {
    await conn.unwatch();
    throw new Error('conflict');
  }
  const now = new Date().toISOString();
  const records = messages.map((m, i) => JSON.stringify({ ...m, seq: expectedSeq + 1 + i }));
  const result = await conn
    .multi()
    .rpush(keys.messages, ...records)
    .hset(keys.session, 'headSeq', String(expectedSeq + messages.length), 'updatedAt', now)
    .exec();
  if (result === null) throw new Error('conflict (EXEC aborted)');
}

async function benchServer(aof: 'always' | 'off') {
  const server = await launchRedis({ aof, ignoreEnv: true });
  const client = new Redis(server.info.url);
  const watchConn = new Redis(server.info.url); // WATCH state is per connection
  const store = redisStore({ client }, { keyPrefix: PREFIX, checkDurability: false });
  const floor = redisCapabilities(client, PREFIX).floor;
  const info = await client.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';

  const heads = { watch: 0, script: 0 };
  const appendSha = String(await client.script('LOAD', APPEND_LUA));
  const sessions = { watch: 'watch', script: 'script' };
  for (const id of Object.values(sessions)) {
    await store.append(id, { expectedSeq: 0, messages: batch(), lease: null });
  }
  heads.watch = heads.script = 3;

  const variants = {
    ...(await storeAndFloorVariants(store, floor, batch, {
      store: 'redisStore.append (EVALSHA)',
      floor: 'floor: hand-written Lua',
    })),
    // The adapter's own script with its arguments prebuilt: the store minus its JS work
    // (core's validateAppendInput, encoding), to show where the time goes.
    'adapter script only': async () => {
      const now = Date.now();
      const records = batch().map((m, i) => JSON.stringify({ ...m, seq: heads.script + 1 + i }));
      const k = redisKeys(PREFIX, sessions.script);
      // biome-ignore format: one ARGV slot per line would hide the shape
      await client.evalsha(appendSha, 3, k.session, k.messages, `${PREFIX}sessions`, heads.script, now, new Date(now).toISOString(), 'none', '', '', '0', '0', '', '', '', '', '', '0', 'inline', '', '', heads.script + 3, `bench.${heads.script}`, ...records);
      heads.script += 3;
    },
    'WATCH + MULTI/EXEC': async () => {
      await watchMultiAppend(watchConn, sessions.watch, heads.watch, batch());
      heads.watch += 3;
    },
  };
  const results = await compareVariants(variants, {
    baseline: 'floor: hand-written Lua',
    warmup: WARMUP,
    samples: ITERATIONS,
  });
  await store.close();
  await client.quit();
  await watchConn.quit();
  await server.stop();

  console.log(
    formatVariants(
      `\nRedis ${version}, appendonly ${aof === 'off' ? 'no' : 'yes, appendfsync always'}, ${ITERATIONS} appends each`,
      results,
    ),
  );
}

console.log(machineLine());
await benchServer('always');
await benchServer('off');
