import { isAgentStoreError } from '@agentstore/core';
import { type LaunchedServer, launchPgBouncer } from '@agentstore/servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.ts';
import { freshSchema, init, message, uniqueId, usePostgres } from './harness.ts';

const pg = usePostgres('firstuse');

describe('first use', () => {
  it('a store whose schema was never migrated says exactly what to call, on every operation', async () => {
    const schema = freshSchema('nomigrate');
    const store = postgresStore({ pool: pg.pool }, { schema });
    for (const attempt of [
      () => store.load('s'),
      () => store.acquireLease('s', { holder: 'h', ttlMs: 1000, init: init() }),
      () => store.listSessions({ limit: 10, cursor: null }),
    ]) {
      const error = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentStoreError(error, 'SCHEMA_MISSING')).toBe(true);
      expect((error as Error).message).toContain('await store.migrate()');
      expect((error as { store: string }).store).toBe('@agentstore/postgres');
    }
    await store.migrate();
    expect(await store.load('s')).toBeNull();
    await pg.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  });
});

describe('behind PgBouncer in transaction mode', () => {
  let bouncer: LaunchedServer<{ url: string }>;
  let schema: string;
  beforeAll(async () => {
    await pg.store(); // migrates this file's schema
    schema = pg.schema;
    // One server connection: every client's statements land on it, so collisions are certain.
    bouncer = await launchPgBouncer({ postgresUrl: pg.url, poolMode: 'transaction', poolSize: 1 });
  });
  afterAll(async () => bouncer?.stop());

  it('named prepared statements colliding on a shared server connection raise a typed error naming the option', async () => {
    const first = postgresStore({ connectionString: bouncer.info.url }, { schema });
    const second = postgresStore({ connectionString: bouncer.info.url }, { schema });
    try {
      await first.load('s'); // prepares the load statement on the only server connection
      const error = await second.load('s').then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentStoreError(error, 'STORE_CONFIGURATION')).toBe(true);
      expect((error as { problem: string }).problem).toBe('prepared-statements-behind-pooler');
      expect((error as Error).message).toContain('preparedStatements: false');
      expect(['42P05', '26000']).toContain(((error as Error).cause as { code: string }).code);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('with preparedStatements: false, concurrent runs through the pooler all commit', async () => {
    const stores = Array.from({ length: 4 }, () =>
      postgresStore({ connectionString: bouncer.info.url }, { schema, preparedStatements: false }),
    );
    try {
      const ids = Array.from({ length: 40 }, (_, i) => uniqueId(`bouncer-${i}`));
      await Promise.all(
        ids.map(async (id, i) => {
          const store = stores[i % stores.length]!;
          const { epoch } = await store.acquireLease(id, { holder: 'h', ttlMs: 30_000, init: init() });
          await store.append(id, {
            expectedSeq: 0,
            messages: [message('m1')],
            lease: { holder: 'h', epoch },
          });
          await store.append(id, {
            expectedSeq: 1,
            messages: [message('m2')],
            lease: { holder: 'h', epoch },
          });
        }),
      );
      for (const id of ids) expect((await stores[0]!.load(id))!.session.headSeq).toBe(2);
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
