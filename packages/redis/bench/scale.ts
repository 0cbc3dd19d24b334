/**
 * Redis at size: commands and time per listing with each filter, per retention batch, per append
 * and load, and the memory of the indexes, on a throwaway server (or AGENTSTORE_REDIS_URL), next
 * to the same figures at 1/100th of the size. Not in CI. From packages/redis:
 *   pnpm run scale                        # 20,000 sessions; SCALE_SESSIONS=… to change
 */
import {
  machineInfo,
  printScaleReport,
  seedScaleSessions,
  sweepIdleSessions,
  timeOperation,
} from '@agentstore/bench';
import type { NewMessage } from '@agentstore/core';
import { launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { redisStore } from '../src/index.ts';
import { indexKeys } from '../src/indexes.ts';

const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 20_000);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 30);

function counter(client: Redis) {
  let count = 0;
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    count += 1;
    return original(...args);
  }) as Redis['sendCommand'];
  return {
    reset: () => (count = 0),
    get count() {
      return count;
    },
  };
}

const message = (i: number): NewMessage => ({
  id: `m${i}`,
  role: 'user',
  content: 'x'.repeat(200),
  createdAt: new Date().toISOString(),
});

async function run(url: string, sessions: number) {
  const client = new Redis(url);
  const prefix = `scale-${sessions}-${Date.now().toString(36)}:`;
  const store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
  const before = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
  // The first 10% go idle before the cutoff; the rest are created after it.
  const { cutoff, seedSeconds } = await seedScaleSessions(store, sessions, 200, message);
  const after = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
  const ix = indexKeys(prefix);
  const indexKeyNames = (await client.keys(`${prefix}ix:*`)) as string[];
  const sizes = await Promise.all(
    indexKeyNames.map(async (key) => Number(await client.memory('USAGE', key))),
  );
  const indexBytes = sizes.reduce((a, b) => a + b, 0);
  const biggest = Math.max(...sizes);

  const sent = counter(client);
  const rows: [string, string, string][] = [];
  const list = async (what: string, filter: Record<string, string>) => {
    sent.reset();
    await store.listSessions({ ...filter, limit: 50 });
    const commands = sent.count;
    rows.push([
      `listSessions ${what} (50)`,
      await timeOperation(SAMPLES, () => store.listSessions({ ...filter, limit: 50 })),
      `${commands} commands`,
    ]);
  };
  await list('no filter', {});
  await list('by owner', { ownerId: 'owner-7' });
  await list('by tenant', { tenantId: 'tenant-7' });
  await list('by agent', { agentName: 'agent-7' });
  await list('by absent owner', { ownerId: 'nobody' });
  await list('by tenant + agent', { tenantId: 'tenant-7', agentName: 'agent-7' });
  const id = `s-${String(Math.floor(sessions / 2)).padStart(8, '0')}`;
  sent.reset();
  await store.load(id);
  const loadCommands = sent.count;
  rows.push([
    'load, 2 messages',
    await timeOperation(SAMPLES, () => store.load(id)),
    `${loadCommands} command`,
  ]);
  let head = 2;
  rows.push([
    'append 1 message at the head',
    await timeOperation(SAMPLES, async () => {
      await store.append(id, { expectedSeq: head, messages: [message(head)], lease: null });
      head += 1;
    }),
    '1 command',
  ]);
  sent.reset();
  const sweep = await sweepIdleSessions(store, cutoff, 500);
  rows.push([
    `retention: ${sweep.deleted} idle sessions, batches of 500`,
    `${sweep.seconds.toFixed(2)} s total`,
    `${sweep.batches} calls, ${sent.count} commands (${(sent.count / Math.max(1, sweep.deleted)).toFixed(1)} per deleted session)`,
  ]);
  rows.push([
    'memory',
    `${Math.round((after - before) / sessions)} B per session in all`,
    `indexes ${Math.round(indexBytes / sessions)} B per session over ${indexKeyNames.length} keys; biggest key ${(biggest / 1024).toFixed(0)} KiB (${ix.lex('a').length} buckets per index)`,
  ]);
  let scan = '0';
  do {
    const [next, keys] = await client.scan(scan, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await client.unlink(...keys);
    scan = next;
  } while (scan !== '0');
  await client.quit();
  return {
    label: `${sessions.toLocaleString('en')} sessions (created in ${seedSeconds.toFixed(0)} s)`,
    rows,
  };
}

const server = await launchRedis();
try {
  const atStart = machineInfo();
  const info = new Redis(server.info.url);
  const version = /redis_version:(\S+)/.exec(String(await info.info('server')))?.[1];
  await info.quit();
  const results = [];
  for (const sessions of [Math.max(100, SESSIONS / 100), SESSIONS])
    results.push(await run(server.info.url, sessions));
  printScaleReport(
    `Redis ${version} at size`,
    SAMPLES,
    ['operation', 'ms', 'commands / notes'],
    results,
    atStart,
  );
} finally {
  await server.stop();
}
