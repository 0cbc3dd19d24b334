import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  findBinary,
  freePort,
  type LaunchedServer,
  MissingServerBinaryError,
  waitUntil,
} from './process-tools.ts';
import { redisCommand } from './redis-command.ts';
import {
  dispose,
  INSTALL_HINT,
  killNow,
  redisServerBinary,
  SBIN_DIRS,
  type SpawnedRedis,
  spawnRedis,
  track,
} from './redis-process.ts';

const run = promisify(execFile);

export interface RedisClusterInfo {
  /** Seed nodes for `new Cluster(nodes)`. */
  nodes: { host: string; port: number }[];
}

export interface LaunchedRedisCluster extends LaunchedServer<RedisClusterInfo> {
  /** `kill -9` of the node on `port` (a cluster this process started): a crash, for failover tests. */
  killNode(port: number): void;
  /**
   * Resolves once every node still running reports the master on `port` (killed with
   * `killNode`) as failed and holding no slots, and `cluster_state:ok`: a replica was promoted
   * and serves its slots. Rejects after `timeoutMs` (default 60 s) with what the nodes last said.
   */
  awaitFailover(port: number, timeoutMs?: number): Promise<void>;
}

/** One line of CLUSTER NODES: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>…`. */
interface ClusterNode {
  port: number;
  flags: string[];
  slots: string[];
}

function parseClusterNodes(text: string): ClusterNode[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.trim().split(' ');
      return { port: Number(/:(\d+)@/.exec(address)?.[1]), flags: flags.split(','), slots };
    });
}

const field = (info: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();

/**
 * Every node agrees on the whole cluster, and every replica has finished its first sync with its
 * master. A replica that never synced refuses to be promoted ("Disconnected from master for
 * longer than allowed", cluster-replica-validity-factor), so a master killed before then leaves
 * its slots down for good.
 */
async function assertFormed(servers: SpawnedRedis[], replicasPerMaster: number): Promise<void> {
  for (const s of servers) {
    const info = await redisCommand('127.0.0.1', s.port, ['CLUSTER', 'INFO']);
    if (field(info, 'cluster_state') !== 'ok')
      throw new Error(`node ${s.port}: ${field(info, 'cluster_state')}`);
    if (Number(field(info, 'cluster_known_nodes')) !== servers.length) {
      throw new Error(`node ${s.port} knows ${field(info, 'cluster_known_nodes')} nodes`);
    }
    if (replicasPerMaster === 0) continue;
    const replication = await redisCommand('127.0.0.1', s.port, ['INFO', 'replication']);
    if (field(replication, 'role') === 'slave') {
      if (field(replication, 'master_link_status') !== 'up') throw new Error(`replica ${s.port} not linked`);
    } else {
      const online = replication.match(/^slave\d+:.*state=online/gm)?.length ?? 0;
      if (online !== replicasPerMaster) throw new Error(`master ${s.port} has ${online} replicas online`);
    }
  }
}

/** The nodes still running all report `port`'s master failed and replaced. */
async function assertFailedOver(survivors: SpawnedRedis[], port: number): Promise<void> {
  for (const s of survivors) {
    const info = await redisCommand('127.0.0.1', s.port, ['CLUSTER', 'INFO']);
    const dead = parseClusterNodes(await redisCommand('127.0.0.1', s.port, ['CLUSTER', 'NODES'])).find(
      (n) => n.port === port,
    );
    const state = field(info, 'cluster_state');
    if (!dead?.flags.includes('fail') || dead.slots.length > 0 || state !== 'ok') {
      throw new Error(
        `node ${s.port}: cluster_state:${state}; ${port} is ${dead?.flags.join(',')} with slots [${dead?.slots.join(' ')}]`,
      );
    }
  }
}

export interface LaunchRedisClusterOptions {
  /** Masters to start. Default 3. */
  masters?: number;
  /** Replicas of each master. Default 0. */
  replicas?: number;
  /** Start a cluster even when AGENTSTORE_REDIS_CLUSTER_NODES is set (tests that kill nodes). */
  ignoreEnv?: boolean;
}

/**
 * `AGENTSTORE_REDIS_CLUSTER_NODES` (`host:port,host:port,…`) when set; otherwise `masters`
 * (default 3) local `redis-server --cluster-enabled yes` processes, each with `replicas` replicas
 * (default 0), joined with `redis-cli --cluster create … --cluster-replicas N`, AOF always,
 * removed by `stop`. Resolves once every node knows every other and every replica has synced
 * with its master. With replicas, `cluster-node-timeout` is 2 s, so a killed master's replica
 * takes over within seconds (`awaitFailover` says when).
 */
export async function launchRedisCluster(
  options: LaunchRedisClusterOptions = {},
): Promise<LaunchedRedisCluster> {
  const external = process.env.AGENTSTORE_REDIS_CLUSTER_NODES;
  if (external && !options.ignoreEnv) {
    const nodes = external.split(',').map((entry) => {
      const [host, port] = entry.trim().split(':');
      return { host: host || '127.0.0.1', port: Number(port) };
    });
    const notOwned = (what: string) =>
      new Error(`${what} needs a cluster this process started; unset AGENTSTORE_REDIS_CLUSTER_NODES`);
    return {
      info: { nodes },
      owned: false,
      async stop() {},
      killNode() {
        throw notOwned('killNode()');
      },
      async awaitFailover() {
        throw notOwned('awaitFailover()');
      },
    };
  }

  const binary = redisServerBinary();
  const cli = findBinary('redis-cli', SBIN_DIRS);
  if (!cli) throw new MissingServerBinaryError('redis-cli', INSTALL_HINT);
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const servers: SpawnedRedis[] = [];
  const stopAll = () => Promise.all(servers.map(dispose));
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      // The bus port is chosen too: the default (port + 10000) may be taken or out of range.
      const busPort = await freePort();
      const server = await spawnRedis(
        binary,
        [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          'nodes.conf',
          // A replica's first sync starts at once (the default waits 5 s for more replicas).
          ...(replicas > 0 ? ['--cluster-node-timeout', '2000', '--repl-diskless-sync-delay', '0'] : []),
        ],
        'always',
      );
      servers.push(server);
      track(server);
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await run(cli, [
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await waitUntil(() => assertFormed(servers, replicas), 60_000, 'redis cluster');
  } catch (error) {
    await stopAll();
    throw error;
  }
  let stopped = false;
  const byPort = (port: number) => {
    const server = servers.find((s) => s.port === port);
    if (!server) throw new Error(`no node of this cluster listens on ${port}`);
    return server;
  };
  return {
    info: { nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })) },
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
    killNode(port) {
      killNow(byPort(port));
    },
    async awaitFailover(port, timeoutMs = 60_000) {
      byPort(port);
      const survivors = servers.filter((s) => s.port !== port && s.child !== null);
      await waitUntil(() => assertFailedOver(survivors, port), timeoutMs, `failover of ${port}`);
    },
  };
}
