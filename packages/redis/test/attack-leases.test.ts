import { type AgentStore, defineAgent, isAgentStoreError, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

/*
 * Attacks on the lease of a real Redis (issue 14): a SIGKILL + restart of the server while a run
 * holds the lease, a queue of runs waiting on one session, a key TTL shorter than the lease.
 */
let server: LaunchedRedis;
let client: Redis;
beforeAll(async () => {
  // A server this process can kill, with every acknowledged write fsynced.
  server = await launchRedis({ aof: 'always', ignoreEnv: true });
  client = new Redis(server.info.url);
});
afterAll(async () => {
  await client?.quit();
  await server?.stop();
});

const anyInput = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('attack: the Redis server restarts while a run holds the lease', () => {
  it('the lease survives the restart: no other worker gets in, the holder finishes, one effect', async () => {
    const store = redisStore({ client }, { keyPrefix: uniquePrefix('restart'), checkDurability: false });
    const effects = new Map<string, number>();
    const inHandler = gate();
    const resume = gate();
    const charge = tool({
      description: 'charges',
      input: anyInput,
      handler: async (_input, ctx) => {
        inHandler.open();
        await resume.opened;
        ctx.signal.throwIfAborted();
        effects.set(ctx.idempotencyKey, (effects.get(ctx.idempotencyKey) ?? 0) + 1);
        return 'charged';
      },
      reconcile: (_input, ctx) =>
        effects.has(ctx.idempotencyKey) ? { happened: true, output: 'charged' } : { happened: false },
    });
    const agent = defineAgent({ name: 'pay', instructions: '', tools: { charge } });
    const holder = run(agent, {
      store,
      sessionId: 'held',
      message: 'pay',
      llm: scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'charge', input: {} }] }, { text: 'done' }]),
      leaseTtlMs: 60_000,
    });
    await inHandler.opened;
    await server.restart();
    // Another worker after the restart: the lease is still the holder's.
    const other = await run(agent, {
      store,
      sessionId: 'held',
      llm: scriptedLlm([{ text: 'x' }]),
    }).catch((error: unknown) => error);
    expect(isAgentStoreError(other, 'SESSION_BUSY')).toBe(true);
    resume.open();
    expect((await holder).status).toBe('complete');
    expect([...effects.values()]).toEqual([1]);
    expect((await store.load('held'))?.session.lease).toBeNull();
  });
});

describe('attack: 8 runs queued on one session', () => {
  it('drain after each release, long before the holder’s 10 min expiry, each exactly once', async () => {
    const store = redisStore({ client }, { keyPrefix: uniquePrefix('queue'), checkDurability: false });
    let acquires = 0;
    const counting: AgentStore = {
      ...store,
      acquireLease: (id, input) => {
        acquires += 1;
        return store.acquireLease(id, input);
      },
    };
    const { epoch } = await store.acquireLease('q', { holder: 'first', ttlMs: 600_000, init: init() });
    const chat = defineAgent({ name: 'agent', instructions: '' });
    const started = performance.now();
    const waiters = Array.from({ length: 8 }, (_, i) =>
      run(chat, {
        store: counting,
        sessionId: 'q',
        message: `m${i}`,
        llm: {
          generate: async () => ({
            text: `a${i}`,
            toolCalls: [],
            usage: { inputTokens: 1, outputTokens: 1 },
          }),
        },
        leaseWaitMs: 120_000,
      }),
    );
    // Every waiter has been refused at least once before the release.
    while (acquires < 8) await new Promise((resolve) => setImmediate(resolve));
    await store.releaseLease('q', { holder: 'first', epoch });
    const results = await Promise.all(waiters);
    const elapsed = performance.now() - started;
    expect(results.map((r) => r.status)).toEqual(Array(8).fill('complete'));
    const loaded = await store.load('q');
    // 8 user messages and 8 answers, each once.
    expect(loaded?.messages.filter((m) => m.role === 'user')).toHaveLength(8);
    expect(loaded?.session.lease).toBeNull();
    // A figure for the report, not an assertion: acquire calls per waiter per second of waiting.
    console.info(
      `[attack] 8 queued runs drained in ${Math.round(elapsed)} ms with ${acquires} acquireLease calls ` +
        `(${(acquires / 8 / (elapsed / 1000)).toFixed(1)} per waiter per second)`,
    );
  });
});

describe('attack: a session key TTL (ttlSeconds) shorter than the lease', () => {
  it('the keys holding a live lease outlive it: after acquire, after an append under it, after a renewal', async () => {
    const prefix = uniquePrefix('keyttl');
    const store: RedisAgentStore = redisStore(
      { client },
      { keyPrefix: prefix, checkDurability: false, ttlSeconds: 1 },
    );
    const sessionKey = async () => (await client.keys(`${prefix}*`)).find((k) => k.endsWith(':s'))!;
    const leaseLeft = async () =>
      Date.parse((await store.load('short'))?.session.lease?.expiresAt ?? '') - Date.now();
    const { epoch } = await store.acquireLease('short', { holder: 'a', ttlMs: 60_000, init: init() });
    const key = await sessionKey();
    // Old code: PTTL 1 s under a 60 s lease. Once the key expires the lease (and its epoch) is
    // gone: another worker was granted the session while holder a still ran ("granted epoch 1").
    expect(await client.pttl(key)).toBeGreaterThanOrEqual((await leaseLeft()) - 1_000);
    await store.append('short', { expectedSeq: 0, messages: [msg()], lease: { holder: 'a', epoch } });
    expect(await client.pttl(key)).toBeGreaterThanOrEqual((await leaseLeft()) - 1_000);
    expect(await client.pttl(`${key.slice(0, -2)}:m`)).toBeGreaterThanOrEqual((await leaseLeft()) - 1_000);
    await store.renewLease('short', { holder: 'a', epoch, ttlMs: 120_000 });
    expect(await client.pttl(key)).toBeGreaterThanOrEqual((await leaseLeft()) - 1_000);
    // Released: back to the configured key TTL.
    await store.append('short', {
      expectedSeq: 1,
      messages: [msg()],
      lease: { holder: 'a', epoch },
      releaseLease: true,
    });
    expect(await client.pttl(key)).toBeLessThanOrEqual(1_000);
  });
});
