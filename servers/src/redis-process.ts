// Spawning and stopping the redis-server processes behind launchRedis and launchRedisCluster.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findBinary, freePort, MissingServerBinaryError, tempDir, waitUntil } from './process-tools.ts';
import { redisCommand } from './redis-command.ts';

export const INSTALL_HINT =
  'Install it with `apt-get install -y redis-server` or set AGENTSTORE_REDIS_URL to a server you run.';
export const SBIN_DIRS = ['/usr/sbin', '/usr/local/bin', '/usr/local/sbin'];

export interface SpawnedRedis {
  port: number;
  dir: string;
  args: string[];
  child: ChildProcess | null;
}

export function redisServerBinary(): string {
  const binary = findBinary('redis-server', SBIN_DIRS);
  if (!binary) throw new MissingServerBinaryError('redis-server', INSTALL_HINT);
  return binary;
}

export async function startProcess(binary: string, server: SpawnedRedis): Promise<void> {
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

export function killNow(server: SpawnedRedis): void {
  server.child?.kill('SIGKILL');
  server.child = null;
}

export async function stopProcess(server: SpawnedRedis, signal: NodeJS.Signals): Promise<void> {
  const child = server.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function spawnRedis(
  binary: string,
  extraArgs: string[],
  aof: 'always' | 'everysec' | 'off' | undefined,
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
export function track(server: SpawnedRedis): void {
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

export async function dispose(server: SpawnedRedis): Promise<void> {
  owned.delete(server);
  try {
    await stopProcess(server, 'SIGTERM');
  } finally {
    rmSync(server.dir, { recursive: true, force: true });
  }
}
