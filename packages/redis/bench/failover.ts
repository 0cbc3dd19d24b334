/**
 * What a Redis Cluster failover costs a run. A 3-master, 3-replica cluster on loopback
 * (`cluster-node-timeout` 2 s); each time, a run's master is killed (-9) mid-step once the step's
 * call is on its replica, and the step's result append rides through the election. Prints, per
 * ioredis client setting, the time from the kill to the promotion (as every surviving node reports
 * it) and to the end of the run, next to the same run without a kill. Then how long one command
 * to a dead master's slot lasts before ioredis gives up ("Too many Cluster redirections"), on a
 * cluster without replicas (so nothing takes over): before the cluster notices the death, and
 * once it reports `cluster_state:fail`. Not in CI. From packages/redis:
 *   pnpm run failover-cost            # 6 failovers per setting; FAILOVERS=… to change
 */
import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { type LaunchedRedisCluster, launchRedisCluster, redisCommand } from '@agentstore/servers';
import { Cluster, type ClusterOptions } from 'ioredis';
import { z } from 'zod';
import { redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';

const FAILOVERS = Number(process.env.FAILOVERS ?? 6);
const SETTINGS: [string, ClusterOptions][] = [
  [
    'README (64 / 300 ms / 300 ms)',
    { maxRedirections: 64, retryDelayOnFailover: 300, retryDelayOnClusterDown: 300 },
  ],
  ['ioredis defaults (16 / 100 ms / 100 ms)', {}],
];

/** The master serving the session's slot and whether it has a live replica. */
async function shardOf(client: Cluster, prefix: string, sessionId: string) {
  const slot = Number(await client.call('CLUSTER', 'KEYSLOT', redisKeys(prefix, sessionId).session));
  const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const port = Number(ranges.find(([from, to]) => slot >= from && slot <= to)![2][1]);
  const node = client.nodes('master').find((n) => n.options.port === port)!;
  const id = String(await node.call('CLUSTER', 'MYID'));
  const replicas = (await node.call('CLUSTER', 'REPLICAS', id)) as string[];
  return { port, node, replicated: replicas.some((line) => !line.split(' ')[2]!.includes('fail')) };
}

/** One two-step run; with `kill`, its master dies once step 1's call is on the replica. */
async function timedRun(cluster: LaunchedRedisCluster, client: Cluster, kill: boolean) {
  const prefix = `failover-bench-${Math.random().toString(36).slice(2, 8)}:`;
  const store = redisStore({ client }, { keyPrefix: prefix });
  let sessionId = '';
  let shard: Awaited<ReturnType<typeof shardOf>> | undefined;
  for (let i = 0; !shard?.replicated; i++) {
    sessionId = `s${i}`;
    shard = await shardOf(client, prefix, sessionId);
  }
  let killedAt = 0;
  let promoted: Promise<number> = Promise.resolve(0);
  const agent = defineAgent({
    name: 'failover',
    instructions: 'post twice',
    tools: {
      post: tool({
        description: 'a side effect',
        input: z.object({ n: z.number() }),
        handler: async ({ n }) => {
          if (n === 1) {
            if (Number(await shard!.node.call('WAIT', 1, 30_000)) !== 1) throw new Error('replica behind');
            killedAt = performance.now();
            if (kill) {
              cluster.killNode(shard!.port);
              promoted = cluster.awaitFailover(shard!.port).then(() => performance.now() - killedAt);
            }
          }
          return { ok: n };
        },
      }),
    },
  });
  const llm = scriptedLlm([
    { text: 'one', toolCalls: [{ name: 'post', input: { n: 1 } }] },
    { text: 'two', toolCalls: [{ name: 'post', input: { n: 2 } }] },
    { text: 'done' },
  ]);
  const result = await run(agent, { store, sessionId, message: 'go', llm });
  const done = performance.now() - killedAt;
  if (result.status !== 'complete') throw new Error(`run ended ${result.status}`);
  await store.close();
  return { done, promoted: await promoted };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

console.log(
  `| client setting | kill → promoted (median / max) | kill → run done (median / max) | same run, no kill |`,
);
console.log('|---|---|---|---|');
for (const [label, options] of SETTINGS) {
  const promoted: number[] = [];
  const done: number[] = [];
  const calm: number[] = [];
  while (done.length < FAILOVERS) {
    // Three failovers per cluster: one per shard.
    const cluster = await launchRedisCluster({ masters: 3, replicas: 1, ignoreEnv: true });
    const client = new Cluster(cluster.info.nodes, options);
    client.on('error', () => {});
    try {
      for (let i = 0; i < 3 && done.length < FAILOVERS; i++) {
        calm.push((await timedRun(cluster, client, false)).done);
        const timed = await timedRun(cluster, client, true);
        done.push(timed.done);
        promoted.push(timed.promoted);
      }
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  }
  const fmt = (xs: number[]) => `${seconds(median(xs))} / ${seconds(Math.max(...xs))}`;
  console.log(`| ${label} | ${fmt(promoted)} | ${fmt(done)} | ${(median(calm)).toFixed(0)} ms |`);
}

/** How long one GET to a dead master's slot lasts with each setting, and how it ends. */
async function commandBudgets() {
  const cluster = await launchRedisCluster({ masters: 3, replicas: 0, ignoreEnv: true });
  const clients = SETTINGS.map(([label, options]) => {
    const client = new Cluster(cluster.info.nodes, options);
    client.on('error', () => {});
    return { label, client };
  });
  try {
    for (const { client } of clients) await client.set('k', '1');
    const admin = clients[0]!.client;
    const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', 'k'));
    const ranges = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const master = Number(ranges.find(([from, to]) => slot >= from && slot <= to)![2][1]);
    const timeGet = async (client: Cluster) => {
      const start = performance.now();
      const error = await client.get('k').then(
        () => 'answered',
        (e: Error) => e.message.replace(/^(.*?)\. Last error: (?:\w*Error: )?(\w+).*$/s, '$1; last: $2'),
      );
      return `${seconds(performance.now() - start)} (${error})`;
    };
    cluster.killNode(master);
    const before = await Promise.all(clients.map(({ client }) => timeGet(client)));
    const other = cluster.info.nodes.find((n) => n.port !== master)!.port;
    while (!(await redisCommand('127.0.0.1', other, ['CLUSTER', 'INFO'])).includes('cluster_state:fail')) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const down = await Promise.all(clients.map(({ client }) => timeGet(client)));
    console.log(
      '\n| client setting | one command, before the death is noticed | one command, during cluster_state:fail |',
    );
    console.log('|---|---|---|');
    for (const [i, { label }] of clients.entries()) console.log(`| ${label} | ${before[i]} | ${down[i]} |`);
  } finally {
    for (const { client } of clients) client.disconnect();
    await cluster.stop();
  }
}
await commandBudgets();
