import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenTestTarget } from '@agentstore/core/testing';
import openPostgresTarget from '@agentstore/postgres/testing';
import openSqliteTarget from '@agentstore/sqlite/testing';
import { afterAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const node = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--conditions=@agentstore/source', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    cwd: join(here, '..'),
  });

describe('the demo', () => {
  it('is SIGKILLed after the side effect, resumes in a new process, and posts to Slack once', () => {
    const demo = node([join(here, '../src/crash-resume-demo.ts')]);
    expect(demo.stderr).toBe('');
    expect(demo.status).toBe(0);
    expect(demo.stdout).toContain('process 1 ended by SIGKILL');
    expect(demo.stdout).toContain('postSlack reconcile: the post is already in Slack');
    expect(demo.stdout).toContain('Slack posts sent: 1 (#oncall)');
  });
});

const targets: OpenTestTarget[] = [];
afterAll(async () => {
  for (const target of targets) await target.close();
});

// Each adapter's published target; other processes open the same data from its module and `reopen`.
describe.each([
  ['sqlite', openSqliteTarget],
  ['postgres', openPostgresTarget],
] as const)('approvals across real processes on %s', (_name, open) => {
  const scenario = async () => {
    const target = await open();
    targets.push(target);
    const handle = JSON.stringify({ module: target.module, options: target.reopen });
    const payments = join(mkdtempSync(join(tmpdir(), 'agentstore-payments-')), 'payments.db');
    const step = (mode: string) => node([join(here, 'refund-worker.ts'), handle, payments, mode]);
    const inspect = (...args: string[]) =>
      node(
        [
          join(here, '../../packages/core/src/cli/agentstore.ts'),
          'inspect',
          'src/store-from-handle.ts',
          'refund-session',
          ...args,
        ],
        {
          AGENTSTORE_BACKEND_HANDLE: handle,
        },
      );
    return { step, inspect };
  };

  it('an approval requested in one process is decided in another; deciding twice is refused; replay needs no model', async () => {
    const { step, inspect } = await scenario();
    const first = step('start');
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toMatchObject({
      status: 'awaiting-approval',
      pending: [{ toolCallId: 'refund-1', toolName: 'refund', input: { cents: 9000 } }],
      refunds: 0,
    });
    const waiting = inspect();
    expect(waiting.stderr).toBe('');
    expect(waiting.stdout).toContain('status awaiting-approval');
    expect(waiting.stdout).toContain('waiting for approval: refund [refund-1]');

    const approved = step('approve');
    expect(approved.stderr).toBe('');
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'complete', refunds: 1 });
    const twice = step('reject');
    expect(twice.status).not.toBe(0);
    expect(twice.stderr).toContain('INVALID_APPROVAL');

    const replay = step('replay');
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toMatchObject({
      status: 'complete',
      refunds: 1,
      response: 'Outcome: {"refunded":9000}',
    });
    const done = JSON.parse(inspect('--json').stdout);
    expect(done.fold.status).toBe('complete');
    expect(done.messages.filter((m: { kind?: string }) => m.kind === 'approval-decided')).toHaveLength(1);
  });

  it('a rejection in another process gives the model the reason and never runs the handler', async () => {
    const { step, inspect } = await scenario();
    expect(JSON.parse(step('start').stdout).status).toBe('awaiting-approval');
    const rejected = step('reject');
    expect(rejected.stderr).toBe('');
    const result = JSON.parse(rejected.stdout);
    expect(result).toMatchObject({ status: 'complete', refunds: 0 });
    expect(result.response).toContain('over the refund policy');
    expect(inspect().stdout).toContain('rejected refund-1: over the refund policy');
  });
});
