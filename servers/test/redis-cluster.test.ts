import { afterAll, expect, it } from 'vitest';
import { type LaunchedRedisCluster, launchRedisCluster, redisCommand } from '../src/index.ts';

let cluster: LaunchedRedisCluster | undefined;
afterAll(async () => {
  await cluster?.stop();
});

it('a cluster with replicas is handed over with every replica synced: a master killed at once is replaced', async () => {
  cluster = await launchRedisCluster({ masters: 3, replicas: 1, ignoreEnv: true });
  const ports = cluster.info.nodes.map((n) => n.port);
  const replication = await Promise.all(
    ports.map((p) => redisCommand('127.0.0.1', p, ['INFO', 'replication'])),
  );
  const replicas = replication.filter((r) => r.includes('role:slave'));
  expect(replicas).toHaveLength(3);
  for (const r of replicas) expect(r).toContain('master_link_status:up');
  // No wait between launch and kill: a replica that had not synced yet would never be promoted.
  const master = ports[replication.findIndex((r) => r.includes('role:master'))]!;
  cluster.killNode(master);
  await cluster.awaitFailover(master);
  // Its replica serves its slots now.
  const replica = ports[replication.findIndex((r) => r.includes(`master_port:${master}`))]!;
  const promoted = await redisCommand('127.0.0.1', replica, ['INFO', 'replication']);
  expect(promoted).toContain('role:master');
  expect(await redisCommand('127.0.0.1', replica, ['CLUSTER', 'INFO'])).toContain('cluster_state:ok');
}, 120_000);
