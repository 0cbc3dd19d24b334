import { defineAgent, isAgentStoreError, run } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type RedisStoreWarning, redisStore } from '../src/index.ts';
import { init } from './helpers.ts';

async function warningsFor(url: string, options: { username?: string; password?: string } = {}) {
  const client = new Redis(url, options);
  const warnings: RedisStoreWarning[] = [];
  const store = redisStore({ client }, { onWarning: (w) => warnings.push(w) });
  const report = await store.durabilityCheck;
  await store.close();
  await client.quit();
  return { warnings, report };
}

it('warns once when the server runs without AOF', async () => {
  const server = await launchRedis({ aof: 'off', ignoreEnv: true });
  try {
    const { warnings, report } = await warningsFor(server.info.url);
    expect(warnings.map((w) => w.code)).toEqual(['AOF_DISABLED']);
    expect(warnings[0]?.message).toMatch(/appendonly yes/);
    expect(report.verified).toBe(false);
  } finally {
    await server.stop();
  }
});

it('warns about the 1 s window of appendfsync everysec', async () => {
  const server = await launchRedis({ aof: 'everysec', ignoreEnv: true });
  try {
    const { warnings } = await warningsFor(server.info.url);
    expect(warnings.map((w) => w.code)).toEqual(['AOF_FSYNC_RELAXED']);
    expect(warnings[0]?.message).toMatch(/1 s/);
  } finally {
    await server.stop();
  }
});

it('stays silent for appendonly yes + appendfsync always, and says so when CONFIG is forbidden', async () => {
  const server = await launchRedis({ aof: 'always', ignoreEnv: true });
  const admin = new Redis(server.info.url);
  try {
    const ok = await warningsFor(server.info.url);
    expect(ok.warnings).toEqual([]);
    expect(ok.report.verified).toBe(true);

    // A managed-Redis style user that may not run CONFIG.
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>secret', '~*', '&*', '+@all', '-config');
    const denied = await warningsFor(server.info.url, { username: 'app', password: 'secret' });
    expect(denied.warnings.map((w) => w.code)).toEqual(['DURABILITY_UNVERIFIED']);
    expect(denied.warnings[0]?.message).toMatch(/could not run CONFIG GET/);
  } finally {
    await admin.quit();
    await server.stop();
  }
});

it('checkDurability: false skips the check', async () => {
  const server = await launchRedis({ aof: 'off', ignoreEnv: true });
  const client = new Redis(server.info.url);
  try {
    const warnings: RedisStoreWarning[] = [];
    const store = redisStore({ client }, { checkDurability: false, onWarning: (w) => warnings.push(w) });
    expect((await store.durabilityCheck).warnings).toEqual([]);
    expect(warnings).toEqual([]);
  } finally {
    await client.quit();
    await server.stop();
  }
});

describe('a store on a server that does not persist', () => {
  const agent = defineAgent({ name: 'durability', instructions: 'answer', tools: {} });
  const answer = () => scriptedLlm([{ text: 'done' }]);
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error as Error & { problem?: string; fix?: string },
    );

  it('does not claim durability, and run() refuses saying what to change', async () => {
    const server = await launchRedis({ aof: 'off', ignoreEnv: true });
    const store = redisStore({ url: server.info.url }, { onWarning: () => {} });
    try {
      // Even the first call, before the check has answered, waits for it.
      const first = await failure(store.acquireLease('s', { holder: 'h', ttlMs: 1000, init: init() }));
      expect(isAgentStoreError(first, 'STORE_CONFIGURATION')).toBe(true);
      expect(store.durable).toBe(false);
      const refused = await failure(run(agent, { store, sessionId: 's', message: 'hi', llm: answer() }));
      expect(isAgentStoreError(refused, 'STORE_CONFIGURATION')).toBe(true);
      expect(refused?.message).toContain('appendonly no');
      expect(refused?.fix).toContain('CONFIG SET appendonly yes');
      expect(refused?.fix).toContain("durability: 'accept-loss'");
      expect(await store.load('s')).toBeNull(); // nothing was written
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it("runs when the user accepts the risk explicitly (durability: 'accept-loss'), still reporting it", async () => {
    const server = await launchRedis({ aof: 'off', ignoreEnv: true });
    const warnings: RedisStoreWarning[] = [];
    const store = redisStore(
      { url: server.info.url },
      { durability: 'accept-loss', onWarning: (w) => warnings.push(w) },
    );
    try {
      const result = await run(agent, { store, sessionId: 's', message: 'hi', llm: answer() });
      expect(result.status).toBe('complete');
      expect(store.durable).toBe(true);
      expect(warnings.map((w) => w.code)).toEqual(['AOF_DISABLED']);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it("appendfsync everysec is refused by default and accepted with durability: 'fsync-everysec'", async () => {
    const server = await launchRedis({ aof: 'everysec', ignoreEnv: true });
    const strict = redisStore({ url: server.info.url }, { onWarning: () => {} });
    const relaxed = redisStore(
      { url: server.info.url },
      { durability: 'fsync-everysec', onWarning: () => {} },
    );
    try {
      await strict.durabilityCheck;
      await relaxed.durabilityCheck;
      expect(strict.durable).toBe(false);
      expect(relaxed.durable).toBe(true);
      const result = await run(agent, { store: relaxed, sessionId: 's', message: 'hi', llm: answer() });
      expect(result.status).toBe('complete');
    } finally {
      await strict.close();
      await relaxed.close();
      await server.stop();
    }
  });

  it('re-checks: a server reconfigured without AOF stops the store, fixing it lets runs go on', async () => {
    const server = await launchRedis({ aof: 'always', ignoreEnv: true });
    const admin = new Redis(server.info.url);
    const store = redisStore({ url: server.info.url }, { onWarning: () => {} });
    try {
      expect((await store.durabilityCheck).verified).toBe(true);
      expect(store.durable).toBe(true);
      await admin.config('SET', 'appendonly', 'no');
      await store.recheckDurability();
      expect(store.durable).toBe(false);
      const refused = await failure(run(agent, { store, sessionId: 's', message: 'hi', llm: answer() }));
      expect(isAgentStoreError(refused, 'STORE_CONFIGURATION')).toBe(true);
      await admin.config('SET', 'appendonly', 'yes');
      await store.recheckDurability();
      expect(store.durable).toBe(true);
      expect((await run(agent, { store, sessionId: 's', message: 'hi', llm: answer() })).status).toBe(
        'complete',
      );
    } finally {
      await admin.quit();
      await store.close();
      await server.stop();
    }
  });
});
