import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type LaunchedRedisCluster, launchRedis, launchRedisCluster } from '@agentstore/servers';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisStoreWarning, redisStore } from '../src/index.ts';
import { init, uniquePrefix } from './helpers.ts';

/*
 * An unreachable node is a connection problem, not a verdict on durability: it never blocks
 * acquires (it serves no writes), it is asked again on a later acquire, and at most once a second
 * however often acquires come.
 */
let cluster: LaunchedRedisCluster;
let admin: Cluster;
beforeAll(async () => {
  cluster = await launchRedisCluster();
  admin = new Cluster(cluster.info.nodes);
  admin.on('error', () => {});
  await admin.ping();
}, 120_000);
afterAll(async () => {
  admin?.disconnect();
  await cluster?.stop();
});

/** CONFIG GET calls the Cluster's nodes have served so far (INFO commandstats, summed). */
async function configCalls(): Promise<number> {
  const infos = await Promise.all(
    cluster.info.nodes.map(async ({ host, port }) => {
      const node = new Redis({ host, port, retryStrategy: () => null, lazyConnect: true });
      node.on('error', () => {});
      try {
        await node.connect();
        return await node.info('commandstats');
      } catch {
        return ''; // a node killed by the test
      } finally {
        node.disconnect();
      }
    }),
  );
  return infos.reduce((sum, info) => sum + Number(/cmdstat_config\|get:calls=(\d+)/.exec(info)?.[1] ?? 0), 0);
}

/**
 * A gate in front of one Cluster node: while shut it drops every connection (the node is out of
 * reach), once opened it forwards them. The Cluster client learns the other nodes from it.
 */
async function gateTo(host: string, port: number) {
  let open = false;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!open) return void socket.destroy();
    const upstream = connect(port, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    open: () => {
      open = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

it('a Cluster not reachable yet is reported as unreachable, not unverified, and the next acquire checks it again', async () => {
  // The store's first check runs while its only startup node drops every connection: exactly a
  // Cluster the store cannot reach at its start. Then the node comes back.
  const [seed] = cluster.info.nodes;
  const gate = await gateTo(seed!.host, seed!.port);
  const client = new Cluster([{ host: '127.0.0.1', port: gate.port }], { enableOfflineQueue: false });
  client.on('error', () => {});
  const warnings: RedisStoreWarning[] = [];
  const store = redisStore(
    { client },
    { keyPrefix: uniquePrefix('reach'), onWarning: (w) => warnings.push(w) },
  );
  try {
    const first = await store.durabilityCheck;
    expect(first.warnings.length).toBeGreaterThan(0);
    expect(first.warnings.every((w) => w.code === 'NODE_UNREACHABLE')).toBe(true);
    expect(first.warnings[0]!.message).toMatch(/could not reach/);
    const reported = warnings.length;
    expect(store.durable).toBe(true); // no verdict either way: nothing to block on
    gate.open();
    if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    await sleep(1_100); // past the once-a-second limit on asking again
    const before = await configCalls();
    const { epoch } = await store.acquireLease('s', { holder: 'w', ttlMs: 60_000, init: init() });
    expect(epoch).toBe(1);
    // The acquire asked the nodes first, and they pass.
    expect((await configCalls()) - before).toBeGreaterThanOrEqual(3);
    expect(warnings).toHaveLength(reported);
  } finally {
    await store.close();
    client.disconnect();
    await gate.close();
  }
}, 60_000);

it('while a node cannot be reached, acquires go on and ask it again at most once a second', async () => {
  // A standalone server whose CONFIG GET fails as a network failure does (the node is down for
  // the check), while the scripts reach it: the state a Cluster is in while one node is away.
  const server = await launchRedis();
  const client = new Redis(server.info.url);
  const flaky = Object.create(client) as Redis;
  let asked = 0;
  flaky.config = (async () => {
    asked += 1;
    throw new Error('connect ECONNREFUSED');
  }) as unknown as Redis['config'];
  const store = redisStore({ client: flaky }, { keyPrefix: uniquePrefix('away'), onWarning: () => {} });
  try {
    expect((await store.durabilityCheck).warnings.map((w) => w.code)).toEqual(['NODE_UNREACHABLE']);
    expect(store.durable).toBe(true);
    asked = 0;
    const started = performance.now();
    const acquires = 40;
    for (let i = 0; i < acquires; i++) {
      await store.acquireLease(`s${i}`, { holder: 'w', ttlMs: 60_000, init: init() });
    }
    const seconds = (performance.now() - started) / 1000;
    // Without the limit every acquire would ask again first.
    expect(asked).toBeLessThanOrEqual(Math.floor(seconds) + 1);
    // Past the limit, the next acquire does ask again.
    await sleep(1_100);
    const before = asked;
    await store.acquireLease('later', { holder: 'w', ttlMs: 60_000, init: init() });
    expect(asked).toBe(before + 1);
  } finally {
    await store.close();
    await client.quit();
    await server.stop();
  }
});
