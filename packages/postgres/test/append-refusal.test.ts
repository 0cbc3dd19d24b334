import { isAgentStoreError } from '@agentstore/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PostgresStore, postgresStore } from '../src/index.ts';
import { tableNames } from '../src/schema.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const server = usePostgres('refusal');

/*
 * A refused append is explained by what the refusing statement itself saw (it raises its facts),
 * never by a later read: by then the lease may be released or expired, or the session re-created,
 * and a refusal by the lease would come back as a seq conflict at an unchanged head. An attack on
 * a version that read afterwards found that in about half of these races.
 */
describe('a refused append names its real cause', () => {
  let store: PostgresStore;
  beforeAll(async () => {
    store = await server.store();
  });

  it('a lease-less append racing the holder’s release is granted or refused as LEASE_LOST, never a seq conflict', async () => {
    const outcomes = { granted: 0, leaseLost: 0 };
    for (let round = 0; round < 200; round++) {
      const id = uniqueId('race');
      const { epoch } = await store.acquireLease(id, { holder: 'h', ttlMs: 60_000, init: init() });
      const [appended] = await Promise.allSettled([
        store.append(id, { expectedSeq: 0, messages: [message('m')], lease: null }),
        store.releaseLease(id, { holder: 'h', epoch }),
      ]);
      const stored = (await store.load(id))!.session.headSeq;
      if (appended.status === 'fulfilled') {
        outcomes.granted += 1;
        expect(stored).toBe(1);
      } else {
        expect(isAgentStoreError(appended.reason, 'LEASE_LOST'), String(appended.reason)).toBe(true);
        expect(stored).toBe(0);
        outcomes.leaseLost += 1;
      }
    }
    expect(outcomes.granted + outcomes.leaseLost).toBe(200);
  });

  it('a schema from before the refusal function gets SchemaMissingError saying to migrate, and nothing is written', async () => {
    const schema = `agentstore_refusal_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const old = postgresStore({ pool: server.pool }, { schema });
    await old.migrate();
    await server.pool.query(`DROP FUNCTION ${tableNames(schema, 'agentstore_').refuseAppend}(text)`);
    await server.pool.query(`DELETE FROM "${schema}".agentstore_migrations WHERE version = 4`);
    try {
      const id = uniqueId('old-schema');
      const first = { expectedSeq: 0, messages: [message('a')], session: { init: init() }, lease: null };
      const error = await old.append(id, first).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'SCHEMA_MISSING' });
      expect(String((error as Error).message)).toMatch(/migrate\(\)/);
      expect(await old.load(id)).toBeNull();
      // migrate() brings it back, and the same append then lands.
      expect((await old.migrate()).applied).toEqual([4]);
      expect(await old.append(id, first)).toEqual({ headSeq: 1 });
    } finally {
      await server.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});
