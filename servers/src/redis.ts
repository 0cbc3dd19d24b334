import type { LaunchedServer } from './process-tools.ts';
import { dispose, redisServerBinary, spawnRedis, startProcess, stopProcess, track } from './redis-process.ts';

export { redisCommand } from './redis-command.ts';

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
