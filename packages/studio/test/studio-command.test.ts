// `agentstore studio` in the core CLI: loads @agentstore/studio on demand, serves the store until
// Ctrl-C, and says what to install when the package is missing.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, inject, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../core/src/cli/agentstore.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

it('serves the store in the scope given, refuses a request without the token, and stops on SIGINT', async () => {
  const child = spawn(
    process.execPath,
    ['--conditions=@agentstore/source', CLI, 'studio', inject('dbPath'), '--tenant', 'globex'],
    { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  try {
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('agentstore studio (scope: tenant globex) at');
    const url = new URL(String((await lines.next()).value).trim());
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.searchParams.get('token')).toMatch(/^[\w-]{43}$/);

    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(`${url.origin}/api/sessions`, { headers: { cookie } });
    const ids = ((await page.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);
    expect(ids).toEqual(['charge-reconciled', 'mail-orphan']);

    expect((await fetch(`${url.origin}/api/info`)).status).toBe(401);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toContain('agentstore studio: refused GET /api/info: 401');
  } finally {
    child.kill();
  }
});

it('names the package to install when @agentstore/studio is missing, before opening the store', () => {
  const project = mkdtempSync(join(tmpdir(), 'agentstore-no-studio-'));
  try {
    const result = spawnSync(
      process.execPath,
      ['--conditions=@agentstore/source', CLI, 'studio', join(project, 'missing.db')],
      // pnpm sets NODE_PATH to its store, where require.resolve would find any workspace package.
      { cwd: project, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' } },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "agentstore studio needs @agentstore/studio: install it in this project (npm install --save-dev @agentstore/studio) and run agentstore from the project's directory\n",
    );
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});

it.each([
  [
    ['--port', '70000'],
    'agentstore: --port takes a whole number from 0 to 65535, not "70000" (agentstore --help for usage)\n',
  ],
  [['--json'], 'agentstore: studio does not take --json (agentstore --help for usage)\n'],
  [['--tenant', ''], 'agentstore: --tenant takes an id, not "" (agentstore --help for usage)\n'],
])('refuses bad flags %j before anything else', (flags, message) => {
  const result = spawnSync(
    process.execPath,
    ['--conditions=@agentstore/source', CLI, 'studio', 'x.db', ...flags],
    {
      cwd: PACKAGE_DIR,
      encoding: 'utf8',
    },
  );
  expect(result.stderr).toBe(message);
  expect(result.status).toBe(2);
});
