import { execFile, spawnSync } from 'node:child_process';
import { chownSync, readdirSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  findBinary,
  freePort,
  type LaunchedServer,
  MissingServerBinaryError,
  tempDir,
} from './process-tools.ts';

const run = promisify(execFile);

const INSTALL_HINT =
  'Install PostgreSQL (e.g. `apt-get install -y postgresql`) or set AGENTSTORE_PG_URL to a server you run.';

/** A Postgres the tests can use. `restart` crashes and restarts it (only for a server this process started). */
export interface LaunchedPostgres extends LaunchedServer<{ url: string }> {
  /** The temp dir holding the data directory, socket and `server.log`; null for AGENTSTORE_PG_URL. */
  dir: string | null;
  /** `pg_ctl restart -m immediate`: every connection drops, as in a server crash. */
  restart(): Promise<void>;
}

/** Debian/Ubuntu keep the server binaries off PATH, under /usr/lib/postgresql/<major>/bin. */
function serverBinDirs(): string[] {
  const root = '/usr/lib/postgresql';
  try {
    return readdirSync(root)
      .filter((major) => /^\d+$/.test(major))
      .sort((a, b) => Number(b) - Number(a))
      .map((major) => join(root, major, 'bin'));
  } catch {
    return [];
  }
}

/**
 * `AGENTSTORE_PG_URL` when set (not owned: `stop` leaves it alone); otherwise a throwaway
 * server in a temp dir on a free port, started with initdb/pg_ctl and removed by `stop`.
 */
export async function launchPostgres(): Promise<LaunchedPostgres> {
  const external = process.env.AGENTSTORE_PG_URL;
  if (external) {
    return {
      info: { url: external },
      owned: false,
      dir: null,
      async stop() {},
      async restart() {
        throw new Error('restart() needs a server this process started; unset AGENTSTORE_PG_URL');
      },
    };
  }

  const dirs = serverBinDirs();
  const initdb = findBinary('initdb', dirs);
  if (!initdb) throw new MissingServerBinaryError('initdb', INSTALL_HINT);
  const pgCtl = findBinary('pg_ctl', dirs);
  if (!pgCtl) throw new MissingServerBinaryError('pg_ctl', INSTALL_HINT);

  // initdb refuses to run as root: run the server as the `postgres` OS user then.
  const asRoot = userInfo().uid === 0;
  let owner: { uid: number; gid: number } | null = null;
  if (asRoot) {
    const id = (flag: string) =>
      Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const uid = id('-u');
    const gid = id('-g');
    if (!Number.isInteger(uid) || uid <= 0) {
      throw new MissingServerBinaryError('postgres OS user', `${INSTALL_HINT} (initdb cannot run as root)`);
    }
    owner = { uid, gid };
  }
  const runAs = (binary: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);

  const dir = tempDir('pg');
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const ctl = (...args: string[]) => runAs(pgCtl, ['-D', data, ...args]);
  const stopNow = (mode: 'fast' | 'immediate') => {
    const args = ['-D', data, 'stop', '-m', mode, '-w'];
    spawnSync(asRoot ? 'runuser' : pgCtl, asRoot ? ['-u', 'postgres', '--', pgCtl, ...args] : args);
  };
  // A test run that dies must not leave a server behind.
  const onExit = () => {
    stopNow('immediate');
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await runAs(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    process.once('exit', onExit);
    await ctl('-o', serverOptions, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start');
  } catch (error) {
    process.removeListener('exit', onExit);
    onExit();
    throw error;
  }

  let stopped = false;
  return {
    info: { url: `postgresql://postgres@127.0.0.1:${port}/postgres` },
    owned: true,
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', onExit);
      try {
        await ctl('stop', '-m', 'fast', '-w');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async restart() {
      await ctl(
        'restart',
        '-m',
        'immediate',
        '-o',
        serverOptions,
        '-l',
        join(dir, 'server.log'),
        '-w',
        '-t',
        '60',
      );
    },
  };
}
