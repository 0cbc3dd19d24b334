// The README's ioredis Cluster settings, tested: a master is killed (-9) between a run's write #1
// and write #2; its replica is elected, and the run completes without firing a side effect twice.

import { defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { type LaunchedRedisCluster, launchRedisCluster } from '@agentstore/servers';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { type RedisAgentStore, redisStore } from '../src/index.ts';
import { redisKeys } from '../src/testing/capabilities.ts';
import { uniquePrefix } from './helpers.ts';

/** What the README recommends for a Cluster client. */
const CLUSTER_OPTIONS = { maxRedirections: 64, retryDelayOnFailover: 300, retryDelayOnClusterDown: 300 };

let cluster: LaunchedRedisCluster;
let client: Cluster;
let store: RedisAgentStore;
let prefix: string;
beforeAll(async () => {
  cluster = await launchRedisCluster({ masters: 3, replicas: 1 });
  client = new Cluster(cluster.info.nodes, CLUSTER_OPTIONS);
  client.on('error', () => {});
  prefix = uniquePrefix('failover');
  store = redisStore({ client }, { keyPrefix: prefix });
  expect((await store.durabilityCheck).verified).toBe(true);
}, 120_000);
afterAll(async () => {
  await store?.close();
  client?.disconnect();
  await cluster?.stop();
});

/** The master that serves `sessionId`'s slot, as a node client. */
async function masterOf(sessionId: string) {
  const slot = Number(await client.call('CLUSTER', 'KEYSLOT', redisKeys(prefix, sessionId).session));
  const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const range = ranges.find(([from, to]) => slot >= from && slot <= to)!;
  const port = Number(range[2][1]);
  return { port, node: client.nodes('master').find((n) => n.options.port === port)! };
}

it('a run rides through the kill -9 of its master: the replica takes over, every effect happens once', async () => {
  const sessionId = 'failover-session';
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
            // Write #1 is on the replica too (replication is asynchronous), then the master dies.
            const { port, node } = await masterOf(sessionId);
            await node.call('WAIT', 1, 5000);
            cluster.killNode(port);
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
  // The lease must outlast the failover (node timeout + election), which a loaded machine can
  // stretch past 24 s; a passing run does not wait for it, so a long lease costs nothing.
  const result = await run(agent, { store, sessionId, message: 'go', llm, leaseTtlMs: 90_000 });
  expect(result.status).toBe('complete');
  expect(result.response).toBe('done');
  expect(effects).toEqual(['post 1', 'post 2']);
  const stored = (await store.load(sessionId))!;
  expect(stored.messages.map((m) => m.role)).toEqual([
    'user',
    'assistant',
    'tool',
    'assistant',
    'tool',
    'assistant',
  ]);
  expect(stored.session.headSeq).toBe(6);
}, 180_000);
