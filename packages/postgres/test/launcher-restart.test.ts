import { existsSync } from 'node:fs';
import { launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.ts';
import { freshSchema, init, message, uniqueId } from './harness.ts';

describe('the Postgres launcher and a server crash', () => {
  it('starts a throwaway server, survives `restart -m immediate` with every acknowledged append, and removes it on stop', async () => {
    const saved = process.env.AGENTSTORE_PG_URL;
    delete process.env.AGENTSTORE_PG_URL;
    const server = await launchPostgres();
    if (saved !== undefined) process.env.AGENTSTORE_PG_URL = saved;
    expect(server.owned).toBe(true);
    expect(server.dir && existsSync(`${server.dir}/data/PG_VERSION`)).toBe(true);

    const pool = new pg.Pool({ connectionString: server.info.url, max: 2 });
    pool.on('error', () => {});
    try {
      const store = postgresStore({ pool }, { schema: freshSchema('crash') });
      await store.migrate();
      const id = uniqueId();
      await store.append(id, {
        expectedSeq: 0,
        messages: [message('a')],
        session: { init: init() },
        lease: null,
      });
      await store.append(id, { expectedSeq: 1, messages: [message('b'), message('c')], lease: null });

      // Like a server crash: every backend dies without a clean shutdown, then recovery runs.
      await server.restart();
      // Pooled connections died with the server; the first query on each fails, then the pool reconnects.
      let loaded = await store.load(id).catch(() => null);
      for (let i = 0; i < 3 && !loaded; i++) loaded = await store.load(id).catch(() => null);
      expect(loaded?.messages.map((m) => [m.seq, m.id])).toEqual([
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
      ]);
      expect(await store.append(id, { expectedSeq: 3, messages: [message('d')], lease: null })).toEqual({
        headSeq: 4,
      });

      // An external URL is used as is and never stopped.
      process.env.AGENTSTORE_PG_URL = server.info.url;
      const external = await launchPostgres();
      if (saved === undefined) delete process.env.AGENTSTORE_PG_URL;
      else process.env.AGENTSTORE_PG_URL = saved;
      expect(external).toMatchObject({ owned: false, dir: null, info: { url: server.info.url } });
      await external.stop();
      await expect(external.restart()).rejects.toThrow(/AGENTSTORE_PG_URL/);
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await pool.end();
      await server.stop();
    }
    const probe = new pg.Client({ connectionString: server.info.url, connectionTimeoutMillis: 2000 });
    await expect(probe.connect()).rejects.toThrow();
    expect(existsSync(server.dir!)).toBe(false);
  });
});
