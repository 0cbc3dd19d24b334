import { launchRedis } from '@agentstore/conformance/launchers';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { type RedisStoreWarning, redisStore } from '../src/index.ts';

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
