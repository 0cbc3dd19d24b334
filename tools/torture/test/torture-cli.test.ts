import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = join(import.meta.dirname, '../src/cli/torture.ts');
const custom = 'docs/examples/custom-store/conformance-target.ts';
const torture = (...args: string[]) =>
  spawnSync(process.execPath, ['--conditions=@agentstore/source', cli, ...args], {
    encoding: 'utf8',
    cwd: join(import.meta.dirname, '../../..'),
  });

describe('agentstore-torture CLI', () => {
  it('prints its usage', () => {
    const result = torture('--help');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: agentstore-torture --target/);
  });

  it('refuses bad arguments with exit code 2', () => {
    expect(torture().status).toBe(2);
    expect(torture('--target', 'no-such-target.ts').stderr).toMatch(/no-such-target\.ts does not exist/);
    expect(torture('--target', custom, '--trials', '0').stderr).toMatch(/--trials must be an integer ≥ 1/);
  });

  it('runs a trial and reports it', () => {
    const result = torture(
      '--target',
      custom,
      '--trials',
      '1',
      '--seed',
      '7',
      '--fence-trials',
      '0',
      '--partition-trials',
      '1',
    );
    expect(result.stderr).toMatch(/seed 7/);
    expect(result.stdout).toMatch(/partition {2}trials {5}1 .* effects after the lease was lost 0/);
    expect(result.stdout).toMatch(/appends x3 trials {5}1 .* acknowledged 90 lease-less appends/);
    expect(result.stdout).toMatch(
      /total: 3 trials, \d+ kills, \d+ resumes, 0 duplicates, 0 lost, 0 violations/,
    );
    expect(result.status).toBe(0);
  }, 60_000);
});
