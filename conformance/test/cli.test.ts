import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const packageDir = join(import.meta.dirname, '..');

/** Runs the CLI from its TypeScript source in a child Node process, as a user's shell would run the bin. */
function cli(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@agentstore/source', join(packageDir, 'src/cli/conformance.ts'), ...args],
      { cwd: packageDir, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('agentstore-conformance CLI', () => {
  it('passes a correct durable store (a store factory module) and exits 0', {
    timeout: 180_000,
  }, async () => {
    const { code, output } = await cli('test/fixtures/good-store.ts');
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/failed/);
    expect(output).toContain('crash matrix');
    expect(code).toBe(0);
  });

  it('fails a store without a seq check, names the broken checks, and exits non-zero', {
    timeout: 180_000,
  }, async () => {
    const { code, output } = await cli('test/fixtures/broken-store.ts');
    expect(output).toMatch(/Tests\s+\d+ failed/);
    expect(output).toContain('of 8 concurrent appends with the same expectedSeq exactly one commits');
    expect(output).toContain('ConformanceViolation');
    expect(code).toBe(1);
  });

  it('fails the split store (messages and head in two statements, actualSeq null), naming the non-atomic append', {
    timeout: 240_000,
  }, async () => {
    const { code, output } = await cli('test/fixtures/split-null-store.ts');
    expect(output).toMatch(/Tests\s+\d+ failed/);
    expect(output).toContain('atomicity seen from outside');
    expect(output).toContain('process tier');
    expect(output).toMatch(/the append is not atomic: its messages and its head move are separate writes/);
    expect(code).toBe(1);
  });

  it('passes the custom-store example from the docs, with every capability', {
    timeout: 180_000,
  }, async () => {
    const { code, output } = await cli('../docs/examples/custom-store/conformance-target.ts');
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/failed/);
    // Registered only because the example declares raw, corrupt and floor.
    expect(output).toContain('the raw reader sees exactly what load returns');
    // Registered because the example declares `reopen`: real SIGKILLs of child processes.
    expect(output).toMatch(/process tier: 16 child processes SIGKILLed inside appends/);
    expect(output).toMatch(/\[agentstore perf\] node:sqlite custom store: 2 commits per tool step/);
    expect(output).toContain('a second store instance and the raw reader never see part of one');
    expect(code).toBe(0);
  });

  it('--filter runs only the matching checks', { timeout: 120_000 }, async () => {
    const { code, output } = await cli('test/fixtures/good-store.ts', '--filter', 'headSeq');
    expect(output).toMatch(/Tests\s+1 passed/);
    expect(output).toContain('append returns the new headSeq and load agrees');
    expect(code).toBe(0);
  });

  it('exits 2 on a usage error', async () => {
    expect((await cli()).code).toBe(2);
    const missing = await cli('does-not-exist.ts');
    expect(missing.code).toBe(2);
    expect(missing.output).toContain('does-not-exist.ts does not exist');
  });
});
