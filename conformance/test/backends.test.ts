import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type OpenBackend, openBackend } from '../src/backends/index.ts';

const opened: OpenBackend[] = [];
afterAll(async () => {
  for (const backend of opened) await backend.close();
});

describe('backend registry', () => {
  it('opens an installed adapter’s test target and reopens the same data from another process', async () => {
    const backend = await openBackend('sqlite');
    opened.push(backend);
    const store = await backend.target.createStore();
    await store.append('shared', {
      expectedSeq: 0,
      messages: [{ id: 'm1', role: 'user', content: 'from the parent', createdAt: new Date().toISOString() }],
      session: { init: { agentName: 'a', ownerId: null, tenantId: null, state: null } },
      lease: null,
    });
    await store.close();
    expect(await backend.target.describe()).toMatch(/^SQLite 3\.\d+/);

    const child = spawnSync(
      process.execPath,
      [
        '--conditions=@agentstore/source',
        join(import.meta.dirname, 'fixtures/reopen-and-read.ts'),
        JSON.stringify(backend.handle),
      ],
      { encoding: 'utf8', cwd: join(import.meta.dirname, '..') },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ headSeq: 1, contents: ['from the parent'] });
  });

  it('names what to install when an adapter is missing', async () => {
    const { importAdapterTesting } = await import('../src/backends/index.ts');
    await expect(importAdapterTesting('@agentstore/not-an-adapter')).rejects.toThrow(
      /install @agentstore\/not-an-adapter/,
    );
  });
});
