import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../src/cli/perf.ts');
// A user's project: not the agentstore repository, so no source targets to fall back on.
const project = mkdtempSync(join(tmpdir(), 'agentstore-perf-cli-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const perf = (...args: string[]) =>
  spawnSync(process.execPath, ['--conditions=@agentstore/source', bin, ...args], {
    cwd: project,
    encoding: 'utf8',
  });

describe('agentstore-perf outside the repository', () => {
  it('--help describes the bin as a user runs it: --target an installed adapter or your own target', () => {
    const help = perf('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agentstore-perf --target <module>/);
    expect(help.stdout).toContain('node_modules/@agentstore/postgres/dist/testing/index.js');
    expect(help.stdout).toContain('Required, except from the root of the');
    expect(help.stdout).not.toMatch(/^pnpm perf/m);
  });

  it('without --target, a usage error (exit 2) instead of importing repository paths that do not exist', () => {
    const none = perf('--rounds', '1');
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^agentstore-perf: --target names no target module\n/);
    expect(none.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
  });

  it('refuses malformed numbers and unknown flags with exit 2', () => {
    for (const args of [
      ['--target', 'x.ts', '--rounds', 'abc'],
      ['--target', 'x.ts', '--model-latency-ms', '1e3'],
      ['--target', 'x.ts', '--no-such-flag'],
    ]) {
      const result = perf(...args);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^agentstore-perf: /);
    }
  });
});
