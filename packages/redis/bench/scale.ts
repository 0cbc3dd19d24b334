/**
 * Redis at size: commands and time per listing with each filter, per retention batch, per append
 * and load, and the memory of the indexes, on a throwaway server (or AGENTSTORE_REDIS_URL), next
 * to the same figures at 1/100th of the size. Not in CI. From packages/redis:
 *   pnpm run scale                        # 20,000 sessions; SCALE_SESSIONS=… to change
 *   SCALE_CLUSTER=1 pnpm run scale        # on a throwaway 3-master Redis Cluster instead
 */
import {
  machineInfo,
  printScaleReport,
  seedScaleSessions,
  sweepIdleSessions,
  timeOperation,
} from '@agentstore/bench';
import type { NewMessage } from '@agentstore/core';
import { launchRedis, launchRedisCluster } from '@agentstore/servers';
import { Cluster, Redis } from 'ioredis';
import { redisStore } from '../src/index.ts';
import { indexKeys } from '../src/indexes.ts';

const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 20_000);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 30);
const CLUSTER = process.env.SCALE_CLUSTER === '1';

/** Counts the commands the client sends (a Cluster counts each command once, where it goes). */
function counter(client: Redis | Cluster) {
  let count = 0;
  const target = client as Redis;
  const original = target.sendCommand.bind(target);
  target.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
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

type Connect = () => Redis | Cluster;

/** The servers holding data: the masters of a Cluster, or the one server. */
const serversOf = (client: Redis | Cluster): Redis[] =>
  client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];

async function usedMemory(client: Redis | Cluster): Promise<number> {
  const infos = await Promise.all(serversOf(client).map((node) => node.info('memory')));
  return infos.reduce((sum, info) => sum + Number(/used_memory:(\d+)/.exec(info)![1]), 0);
}

/** Every key matching `pattern` on every server, with the server that holds it. */
async function keysOf(client: Redis | Cluster, pattern: string): Promise<[Redis, string][]> {
  const found: [Redis, string][] = [];
  for (const node of serversOf(client)) {
    let scan = '0';
    do {
      const [next, keys] = await node.scan(scan, 'MATCH', pattern, 'COUNT', 1000);
      for (const key of keys) found.push([node, key]);
      scan = next;
    } while (scan !== '0');
  }
  return found;
}

async function run(connect: Connect, sessions: number) {
  const client = connect();
  const prefix = `scale-${sessions}-${Date.now().toString(36)}:`;
  const store = redisStore({ client }, { keyPrefix: prefix, checkDurability: false });
  await client.ping();
  const before = await usedMemory(client);
  // The first 10% go idle before the cutoff; the rest are created after it.
  const { cutoff, seedSeconds } = await seedScaleSessions(store, sessions, 200, message);
  const after = await usedMemory(client);
  const ix = indexKeys(prefix);
  const indexKeyNames = await keysOf(client, `${prefix}ix:*`);
  const sizes = await Promise.all(
    indexKeyNames.map(async ([node, key]) => Number(await node.memory('USAGE', key))),
  );
  const indexBytes = sizes.reduce((a, b) => a + b, 0);
  const biggest = sizes.reduce((a, b) => Math.max(a, b), 0);

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
  await list('by owner + tenant', { ownerId: 'owner-7', tenantId: 'tenant-7' });
  await list('by tenant + absent agent', { tenantId: 'tenant-7', agentName: 'nobody' });
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
  for (const [node, key] of await keysOf(client, `${prefix}*`)) await node.unlink(key);
  await client.quit();
  return {
    label: `${sessions.toLocaleString('en')} sessions (created in ${seedSeconds.toFixed(0)} s)`,
    rows,
  };
}

const server = CLUSTER ? await launchRedisCluster() : await launchRedis();
const connect: Connect = () =>
  'url' in server.info ? new Redis(server.info.url) : new Cluster(server.info.nodes);
try {
  const atStart = machineInfo();
  const info = connect();
  await info.ping();
  const version = /redis_version:(\S+)/.exec(String(await serversOf(info)[0]!.info('server')))?.[1];
  await info.quit();
  const results = [];
  for (const sessions of [Math.max(100, SESSIONS / 100), SESSIONS])
    results.push(await run(connect, sessions));
  printScaleReport(
    `Redis ${version}${CLUSTER ? ' Cluster (3 masters)' : ''} at size`,
    SAMPLES,
    ['operation', 'ms', 'commands / notes'],
    results,
    atStart,
  );
} finally {
  await server.stop();
}
