import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  findBinary,
  freePort,
  type LaunchedServer,
  MissingServerBinaryError,
  tempDir,
  waitUntil,
} from './process-tools.ts';

const run = promisify(execFile);

const INSTALL_HINT =
  'Install it with `apt-get install -y redis-server` or set AGENTSTORE_REDIS_URL to a server you run.';
const SBIN_DIRS = ['/usr/sbin', '/usr/local/bin', '/usr/local/sbin'];

export interface RedisServerInfo {
  url: string;
  host: string;
  port: number;
}

export interface LaunchedRedis extends LaunchedServer<RedisServerInfo> {
  /**
   * SIGKILLs the server (a crash: nothing is flushed beyond what AOF already made durable) and
   * starts it again on the same port and data dir. Only for a server this process started.
   */
  restart(): Promise<void>;
}

export interface LaunchRedisOptions {
  /** AOF mode of a spawned server. Default `always` (every acknowledged write is fsynced). */
  aof?: 'always' | 'everysec' | 'off';
  /** Spawn a server even when AGENTSTORE_REDIS_URL is set (tests that need a given config). */
  ignoreEnv?: boolean;
}

/** Sends one command as RESP and returns its first reply line/bulk as text (errors reject). */
export function redisCommand(host: string, port: number, args: string[], timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let buffer = '';
    const finish = (error: Error | null, value?: string) => {
      socket.destroy();
      if (error) reject(error);
      else resolve(value ?? '');
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`redis ${host}:${port} timed out`)));
    socket.on('error', (error) => finish(error));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const lineEnd = buffer.indexOf('\r\n');
      if (lineEnd < 0) return;
      const head = buffer.slice(0, lineEnd);
      if (head.startsWith('-')) return finish(new Error(head.slice(1)));
      if (head.startsWith('+') || head.startsWith(':')) return finish(null, head.slice(1));
      if (head.startsWith('$')) {
        const length = Number(head.slice(1));
        if (length < 0) return finish(null, '');
        const body = Buffer.from(buffer.slice(lineEnd + 2), 'utf8');
        if (body.length >= length + 2) finish(null, body.subarray(0, length).toString('utf8'));
        return;
      }
      finish(new Error(`unexpected reply ${head}`));
    });
    const payload = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    socket.write(payload);
  });
}

interface SpawnedRedis {
  port: number;
  dir: string;
  args: string[];
  child: ChildProcess | null;
}

function redisServerBinary(): string {
  const binary = findBinary('redis-server', SBIN_DIRS);
  if (!binary) throw new MissingServerBinaryError('redis-server', INSTALL_HINT);
  return binary;
}

async function startProcess(binary: string, server: SpawnedRedis): Promise<void> {
  const child = spawn(binary, server.args, { stdio: 'ignore' });
  server.child = child;
  let exited: string | null = null;
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? code}`;
    if (server.child === child) server.child = null;
  });
  try {
    await waitUntil(
      async () => {
        if (exited) throw new Error(`redis-server ${exited}`);
        const reply = await redisCommand('127.0.0.1', server.port, ['PING'], 1000);
        if (reply !== 'PONG') throw new Error(`PING answered ${reply}`);
      },
      30_000,
      `redis-server on port ${server.port}`,
    );
  } catch (error) {
    let log = '';
    try {
      log = readFileSync(join(server.dir, 'redis.log'), 'utf8').split('\n').slice(-15).join('\n');
    } catch {}
    killNow(server);
    throw new Error(`redis-server did not start: ${(error as Error).message}\n${log}`, { cause: error });
  }
}

function killNow(server: SpawnedRedis): void {
  server.child?.kill('SIGKILL');
  server.child = null;
}

async function stopProcess(server: SpawnedRedis, signal: NodeJS.Signals): Promise<void> {
  const child = server.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function spawnRedis(
  binary: string,
  extraArgs: string[],
  aof: LaunchRedisOptions['aof'],
): Promise<SpawnedRedis> {
  const dir = tempDir('redis');
  const port = await freePort();
  const aofArgs =
    aof === 'off' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', aof ?? 'always'];
  const server: SpawnedRedis = {
    port,
    dir,
    child: null,
    args: [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      ...aofArgs,
      '--save',
      '',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--logfile',
      join(dir, 'redis.log'),
      ...extraArgs,
    ],
  };
  await startProcess(binary, server);
  return server;
}

/** Owned servers die with this process even when a test run never calls `stop()`. */
const owned = new Set<SpawnedRedis>();
let exitHookInstalled = false;
function track(server: SpawnedRedis): void {
  owned.add(server);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const s of owned) {
      killNow(s);
      rmSync(s.dir, { recursive: true, force: true });
    }
  });
}

async function dispose(server: SpawnedRedis): Promise<void> {
  owned.delete(server);
  try {
    await stopProcess(server, 'SIGTERM');
  } finally {
    rmSync(server.dir, { recursive: true, force: true });
  }
}

/**
 * `AGENTSTORE_REDIS_URL` when set (not owned: `stop` leaves it alone); otherwise a throwaway
 * `redis-server` on a free port with AOF `appendfsync always`, no RDB snapshots, data in a temp
 * dir that `stop` removes.
 */
export async function launchRedis(options: LaunchRedisOptions = {}): Promise<LaunchedRedis> {
  const external = process.env.AGENTSTORE_REDIS_URL;
  if (external && !options.ignoreEnv) {
    const url = new URL(external);
    return {
      info: { url: external, host: url.hostname, port: Number(url.port || 6379) },
      owned: false,
      async stop() {},
      async restart() {
        throw new Error('restart() needs a server this process started; unset AGENTSTORE_REDIS_URL');
      },
    };
  }

  const binary = redisServerBinary();
  const server = await spawnRedis(binary, [], options.aof);
  track(server);
  let stopped = false;
  return {
    info: { url: `redis://127.0.0.1:${server.port}`, host: '127.0.0.1', port: server.port },
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await dispose(server);
    },
    async restart() {
      await stopProcess(server, 'SIGKILL');
      await startProcess(binary, server);
    },
  };
}

export interface RedisClusterInfo {
  /** Seed nodes for `new Cluster(nodes)`. */
  nodes: { host: string; port: number }[];
}

export interface LaunchedRedisCluster extends LaunchedServer<RedisClusterInfo> {
  /** `kill -9` of the node on `port` (a cluster this process started): a crash, for failover tests. */
  killNode(port: number): void;
}

/**
 * `AGENTSTORE_REDIS_CLUSTER_NODES` (`host:port,host:port,…`) when set; otherwise `masters`
 * (default 3) local `redis-server --cluster-enabled yes` processes, each with `replicas` replicas
 * (default 0), joined with `redis-cli --cluster create … --cluster-replicas N`, AOF always,
 * removed by `stop`. With replicas, `cluster-node-timeout` is 2 s, so a killed master's replica
 * takes over within seconds.
 */
export async function launchRedisCluster(
  options: { masters?: number; replicas?: number } = {},
): Promise<LaunchedRedisCluster> {
  const external = process.env.AGENTSTORE_REDIS_CLUSTER_NODES;
  if (external) {
    const nodes = external.split(',').map((entry) => {
      const [host, port] = entry.trim().split(':');
      return { host: host || '127.0.0.1', port: Number(port) };
    });
    return {
      info: { nodes },
      owned: false,
      async stop() {},
      killNode() {
        throw new Error(
          'killNode() needs a cluster this process started; unset AGENTSTORE_REDIS_CLUSTER_NODES',
        );
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
          ...(replicas > 0 ? ['--cluster-node-timeout', '2000'] : []),
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
    await waitUntil(
      async () => {
        for (const s of servers) {
          const info = await redisCommand('127.0.0.1', s.port, ['CLUSTER', 'INFO']);
          if (!info.includes('cluster_state:ok')) throw new Error(`node ${s.port} not ready`);
        }
      },
      30_000,
      'redis cluster',
    );
  } catch (error) {
    await stopAll();
    throw error;
  }
  let stopped = false;
  return {
    info: { nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })) },
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
    killNode(port) {
      const server = servers.find((s) => s.port === port);
      if (!server) throw new Error(`no node of this cluster listens on ${port}`);
      killNow(server);
    },
  };
}
