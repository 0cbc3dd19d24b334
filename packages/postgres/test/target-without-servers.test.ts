import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { usePostgres } from './harness.ts';

const pg = usePostgres('target');

/** Opens and closes `@agentstore/postgres/testing`'s default target in a process without @agentstore/servers. */
function openTargetWithoutServers(env: NodeJS.ProcessEnv) {
  const program = `const { default: open } = await import('@agentstore/postgres/testing');
    try {
      const target = await open();
      const store = target.createStore();
      console.log(JSON.stringify({ name: target.name, sessions: (await store.listSessions({ limit: 1 })).sessions.length }));
      await store.close();
      await target.close();
    } catch (e) {
      console.log(JSON.stringify({ code: e.code, problem: e.problem, message: e.message }));
    }`;
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=@agentstore/source',
      '--import',
      join(import.meta.dirname, 'fixtures/without-servers.mjs'),
      '--input-type=module',
      '-e',
      program,
    ],
    { cwd: join(import.meta.dirname, '..'), env, encoding: 'utf8' },
  );
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

it('with AGENTSTORE_PG_URL set, the built-in target opens without @agentstore/servers installed', () => {
  const env = { PATH: process.env.PATH ?? '', AGENTSTORE_PG_URL: pg.url };
  expect(openTargetWithoutServers(env)).toEqual({ name: 'postgres', sessions: 0 });
});

it('with neither, a typed error says both ways out', () => {
  const outcome = openTargetWithoutServers({ PATH: process.env.PATH ?? '' });
  expect(outcome).toMatchObject({ code: 'STORE_CONFIGURATION', problem: 'no-server' });
  expect(outcome.message).toBe(
    '@agentstore/postgres/testing: AGENTSTORE_PG_URL is not set, and @agentstore/servers, which would start a Postgres to test against, is not installed. Fix: set AGENTSTORE_PG_URL to a server of your own, or install @agentstore/servers (npm i -D @agentstore/servers).',
  );
});
