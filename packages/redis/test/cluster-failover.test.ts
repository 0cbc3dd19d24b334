// A run's master is killed (-9) between the run's write #1 and write #2, once write #1 is on its
// replica: the replica is elected and the run completes with every side effect exactly once.
// Ordered by events, not sleeps: the launcher resolves only once every replica has synced (an
// unsynced replica is never promoted), WAIT puts write #1 on the replica, and the first case
// waits for the promotion as every surviving node reports it (CLUSTER NODES / CLUSTER INFO).

import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { type LaunchedRedisCluster, launchRedisCluster } from '@agentstore/servers';
import { Cluster, type ClusterOptions } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { uniquePrefix } from './helpers.ts';

/** What the README recommends for a Cluster client. */
const README_OPTIONS: ClusterOptions = {
  maxRedirections: 64,
  retryDelayOnFailover: 300,
  retryDelayOnClusterDown: 300,
};

let cluster: LaunchedRedisCluster;
const clients: Cluster[] = [];
beforeAll(async () => {
  cluster = await launchRedisCluster({ masters: 3, replicas: 1, ignoreEnv: true });
}, 120_000);
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await cluster?.stop();
});

function clusterClient(options: ClusterOptions): Cluster {
  const client = new Cluster(cluster.info.nodes, options);
  client.on('error', () => {});
  clients.push(client);
  return client;
}

/** The master serving `sessionId`'s slot, and its replicas, as the cluster reports them now. */
async function shardOf(client: Cluster, prefix: string, sessionId: string) {
  const slot = Number(await client.call('CLUSTER', 'KEYSLOT', redisKeys(prefix, sessionId).session));
  const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const port = Number(ranges.find(([from, to]) => slot >= from && slot <= to)![2][1]);
  const node = client.nodes('master').find((n) => n.options.port === port)!;
  const id = String(await node.call('CLUSTER', 'MYID'));
  const replicas = ((await node.call('CLUSTER', 'REPLICAS', id)) as string[])
    .filter((line) => !line.split(' ')[2]!.includes('fail'))
    .map((line) => Number(/:(\d+)@/.exec(line)![1]));
  return { port, node, replicas };
}

/** A session id on a shard with a replica to promote (one an earlier case failed over has none left). */
async function sessionOnLiveShard(client: Cluster, prefix: string) {
  for (let i = 0; ; i++) {
    const sessionId = `failover-${i}`;
    const shard = await shardOf(client, prefix, sessionId);
    if (shard.replicas.length === 1) return { sessionId, ...shard };
  }
}

/**
 * Runs two steps of one tool on a fresh store over `client`; the first call's handler kills the
 * session's master once write #1 (the call) is on its replica, then awaits `afterKill(port)`.
 */
async function runThroughKill(client: Cluster, afterKill: (port: number) => Promise<void>) {
  const prefix = uniquePrefix('failover');
  const store = redisStore({ client }, { keyPrefix: prefix });
  expect((await store.durabilityCheck).verified).toBe(true);
  const shard = await sessionOnLiveShard(client, prefix);
  const effects: string[] = [];
  const agent = defineAgent({
    name: 'failover',
    instructions: 'post twice',
    tools: {
      post: tool({
        description: 'a side effect',
        input: z.object({ n: z.number() }),
        handler: async ({ n }) => {
          effects.push(`post ${n}`);
          if (n === 1) {
            // Write #1 is on the replica (replication is asynchronous), then the master dies.
            expect(await shard.node.call('WAIT', 1, 30_000)).toBe(1);
            cluster.killNode(shard.port);
            await afterKill(shard.port);
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
  // The default lease (30 s): renewals fail while the slot has no master, and the run must still
  // hold its lease when the replica takes over.
  const result = await run(agent, { store, sessionId: shard.sessionId, message: 'go', llm });
  expect(result.status).toBe('complete');
  expect(result.response).toBe('done');
  expect(effects).toEqual(['post 1', 'post 2']);
  const stored = (await store.load(shard.sessionId))!;
  expect(stored.messages.map((m) => m.role)).toEqual([
    'user',
    'assistant',
    'tool',
    'assistant',
    'tool',
    'assistant',
  ]);
  expect(stored.session.headSeq).toBe(6);
  // The session is now served by the replica that was promoted.
  await cluster.awaitFailover(shard.port);
  expect((await shardOf(client, prefix, shard.sessionId)).port).toBe(shard.replicas[0]);
  await store.close();
}

it('after the cluster reports the replica promoted, a run whose master died finishes on it, every effect once', async () => {
  // Write #2 goes out only once every surviving node reports the failover: the client still maps
  // the slot to the dead master and must find the new one.
  await runThroughKill(clusterClient(README_OPTIONS), (port) => cluster.awaitFailover(port));
}, 120_000);

it('a run whose master dies mid-step rides through the election itself, every effect once', async () => {
  // Write #2 goes out at once, while the dead master still owns the slot: connection refused,
  // MOVED back to it, then CLUSTERDOWN until the replica is elected.
  await runThroughKill(clusterClient(README_OPTIONS), async () => {});
}, 120_000);

it('with ioredis’ default Cluster options too: the run re-reads until the election ends', async () => {
  // Defaults (16 redirections, 100 ms apart) give up on a command within about 2 s; run()'s
  // re-reads of an append whose outcome is unknown carry it through the rest of the election.
  await runThroughKill(clusterClient({}), async () => {});
}, 120_000);
