import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classifyStoreArgument } from '../src/cli/store-url.ts';

describe('what an inspector argument names', () => {
  it('maps each built-in URL scheme to its adapter package', () => {
    const pkg = (argument: string) => {
      const target = classifyStoreArgument(argument);
      return target.kind === 'url' ? target.adapter.package : target.kind;
    };
    expect(pkg('postgres://u@h:5432/db')).toBe('@agentstore/postgres');
    expect(pkg('postgresql://u@h/db?schema=x')).toBe('@agentstore/postgres');
    expect(pkg('redis://h:6379')).toBe('@agentstore/redis');
    expect(pkg('rediss://h:6380')).toBe('@agentstore/redis');
    expect(pkg('dynamodb://Sessions?region=eu-west-1')).toBe('@agentstore/dynamodb');
    expect(pkg('sqlite:./a.db')).toBe('@agentstore/sqlite');
    expect(pkg(pathToFileURL(join(tmpdir(), 'a.db')).href)).toBe('@agentstore/sqlite');
    expect(pkg('./agent.db')).toBe('@agentstore/sqlite');
    expect(pkg('data/agent')).toBe('@agentstore/sqlite');
    expect(pkg('src/store.ts')).toBe('module');
    expect(pkg('store.mjs')).toBe('module');
  });

  it('turns a bare SQLite path into an absolute file: URL', () => {
    const target = classifyStoreArgument('agent.db');
    expect(target.kind === 'url' && target.url).toBe(`file://${join(process.cwd(), 'agent.db')}`);
  });

  it('refuses an unknown scheme and lists the known ones', () => {
    expect(() => classifyStoreArgument('mongodb://h/db')).toThrow(
      /unknown store URL scheme mongodb:.*postgres:/,
    );
  });

  it('says which package to install when the project lacks the adapter (the CLI, run in an empty project)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentstore-no-adapter-'));
    writeFileSync(join(empty, 'package.json'), '{}');
    const cli = join(import.meta.dirname, '../src/cli/agentstore.ts');
    const result = spawnSync(
      process.execPath,
      ['--conditions=@agentstore/source', cli, 'sessions', 'dynamodb://T?region=x'],
      // Not the test runner's environment: pnpm's shims put the workspace's packages on NODE_PATH.
      { cwd: empty, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "dynamodb://T needs @agentstore/dynamodb: install it in this project (npm install @agentstore/dynamodb @aws-sdk/client-dynamodb) and run agentstore from the project's directory\n",
    );
    const help = spawnSync(process.execPath, ['--conditions=@agentstore/source', cli, '--help'], {
      encoding: 'utf8',
    });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('postgres://user@host:5432/db');
  });
});
