import { spawn, spawnSync } from 'node:child_process';
import { chownSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import {
  findBinary,
  freePort,
  type LaunchedServer,
  MissingServerBinaryError,
  tempDir,
  waitUntil,
} from './process-tools.ts';

const INSTALL_HINT = 'Install PgBouncer (e.g. `apt-get install -y pgbouncer`).';

export interface LaunchPgBouncerOptions {
  /** The Postgres to pool, as a URL with host, port, user and database (trust auth). */
  postgresUrl: string;
  /** Default `transaction`: the mode that breaks named prepared statements before PgBouncer 1.21. */
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Server connections per database/user pair. Default 5. */
  poolSize?: number;
}

const probe = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });

/**
 * A throwaway PgBouncer in front of a Postgres (trust auth, loopback, a free port), in
 * transaction mode by default: what many production deployments put between an app and
 * Postgres. Runs as the `postgres` OS user when started as root (PgBouncer refuses root).
 */
export async function launchPgBouncer(
  options: LaunchPgBouncerOptions,
): Promise<LaunchedServer<{ url: string }>> {
  const binary = findBinary('pgbouncer', ['/usr/sbin', '/usr/local/sbin']);
  if (!binary) throw new MissingServerBinaryError('pgbouncer', INSTALL_HINT);
  const upstream = new URL(options.postgresUrl);
  const database = upstream.pathname.replace(/^\//, '') || 'postgres';
  const user = decodeURIComponent(upstream.username) || 'postgres';
  const port = await freePort();
  const dir = tempDir('pgbouncer');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database} user=${user}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.poolSize ?? 5}`,
      'max_client_conn = 500',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const id = (flag: string) =>
      Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, id('-u'), id('-g'));
    for (const file of ['pgbouncer.ini', 'userlist.txt']) chownSync(join(dir, file), id('-u'), id('-g'));
  }
  const child = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', binary, ini], { stdio: 'ignore' })
    : spawn(binary, [ini], { stdio: 'ignore' });
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  try {
    await waitUntil(
      async () => {
        if (exited) throw new Error(`pgbouncer exited; see ${join(dir, 'pgbouncer.log')}`);
        await probe(port);
      },
      15_000,
      'pgbouncer',
    );
  } catch (error) {
    onExit();
    process.removeListener('exit', onExit);
    throw error;
  }
  return {
    info: { url: `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}` },
    owned: true,
    async stop() {
      process.removeListener('exit', onExit);
      if (!exited) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
