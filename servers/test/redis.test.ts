import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { launchRedis, MissingServerBinaryError, redisCommand } from '../src/index.ts';

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

it('a missing redis-server is a MissingServerBinaryError that says what to install', async () => {
  // A PATH with a shell on it and nothing else.
  const bin = mkdtempSync(join(tmpdir(), 'agentstore-nobin-'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  process.env.PATH = bin;
  const error = await launchRedis({ ignoreEnv: true }).catch((e: unknown) => e);
  rmSync(bin, { recursive: true, force: true });
  expect(error).toBeInstanceOf(MissingServerBinaryError);
  expect((error as Error).message).toContain('apt-get install -y redis-server');
});

it('starts an AOF-always server that answers PING, and stop() shuts it down', async () => {
  const server = await launchRedis({ ignoreEnv: true });
  expect(server.owned).toBe(true);
  const { host, port } = server.info;
  expect(await redisCommand(host, port, ['PING'])).toBe('PONG');
  const persistence = await redisCommand(host, port, ['INFO', 'persistence']);
  expect(persistence).toContain('aof_enabled:1');
  await server.stop();
  await expect(redisCommand(host, port, ['PING'], 500)).rejects.toThrow();
});
