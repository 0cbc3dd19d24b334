import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server the tests can use, and how to get rid of it. */
export interface LaunchedServer<Info> {
  info: Info;
  /** True when this process started the server (and `stop` will end it). */
  owned: boolean;
  stop(): Promise<void>;
}

export class MissingServerBinaryError extends Error {
  readonly code = 'MISSING_SERVER_BINARY' as const;
  readonly binary: string;
  constructor(binary: string, howToInstall: string) {
    super(`${binary} was not found on PATH. ${howToInstall}`);
    this.name = 'MissingServerBinaryError';
    this.binary = binary;
  }
}

/** A TCP port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `agentstore-${prefix}-`));
}

/** Absolute path of a binary on PATH (or in the extra dirs), else null. */
export function findBinary(name: string, extraDirs: string[] = []): string | null {
  const path = [...extraDirs, ...(process.env.PATH ?? '').split(':')].join(':');
  const found = spawnSync('sh', ['-c', `command -v ${name}`], {
    env: { ...process.env, PATH: path },
    encoding: 'utf8',
  });
  const out = (found.stdout ?? '').trim();
  return found.status === 0 && out ? out : null;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it resolves, or throws the last error after `timeoutMs`. */
export async function waitUntil(
  probe: () => Promise<unknown>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await probe();
      return;
    } catch (error) {
      last = error;
      await sleep(50);
    }
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`, { cause: last });
}
