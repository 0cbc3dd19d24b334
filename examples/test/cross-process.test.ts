import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const node = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--conditions=@agentstore/source', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    cwd: join(here, '..'),
  });

describe('across real processes on one SQLite file', () => {
  it('the demo: SIGKILL after the side effect, resume in a new process, one Slack post', () => {
    const demo = node([join(here, '../src/crash-resume-demo.ts')]);
    expect(demo.stderr).toBe('');
    expect(demo.status).toBe(0);
    expect(demo.stdout).toContain('process 1 ended by SIGKILL');
    expect(demo.stdout).toContain('postSlack reconcile: the post is already in Slack');
    expect(demo.stdout).toContain('Slack posts sent: 1 (#oncall)');
  });

  it('an approval requested in one process is decided in another, and the inspector shows it', () => {
    const db = join(mkdtempSync(join(tmpdir(), 'agentstore-approval-')), 'agent.db');
    const worker = join(here, 'refund-worker.ts');
    const first = node([worker, db, 'start']);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual({
      status: 'awaiting-approval',
      pending: [{ toolCallId: 'refund-1', toolName: 'refund', input: { cents: 9000 } }],
      refunds: 0,
    });
    const waiting = node(
      [
        join(here, '../../packages/core/src/cli/agentstore.ts'),
        'inspect',
        'src/sqlite-from-env.ts',
        'refund-session',
      ],
      {
        AGENTSTORE_SQLITE_PATH: db,
      },
    );
    expect(waiting.status).toBe(0);
    expect(waiting.stdout).toContain('status awaiting-approval');
    expect(waiting.stdout).toContain('waiting for approval: refund [refund-1]');

    const second = node([worker, db, 'approve']);
    expect(second.stderr).toBe('');
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'complete', refunds: 1 });
    const twice = node([worker, db, 'approve']);
    expect(twice.status).not.toBe(0);
    expect(twice.stderr).toContain('INVALID_APPROVAL');

    const done = node(
      [
        join(here, '../../packages/core/src/cli/agentstore.ts'),
        'inspect',
        'src/sqlite-from-env.ts',
        'refund-session',
        '--json',
      ],
      {
        AGENTSTORE_SQLITE_PATH: db,
      },
    );
    const json = JSON.parse(done.stdout);
    expect(json.fold.status).toBe('complete');
    expect(json.messages.filter((m: { kind?: string }) => m.kind === 'approval-decided')).toHaveLength(1);
  });
});
