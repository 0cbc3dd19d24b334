import { sqliteTableNames as tableNames } from '@agentstore/sqlite-dialect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardSql } from '../src/append-batch.ts';
import type { D1DatabaseLike } from '../src/index.ts';
import { migrateSchema } from '../src/schema.ts';
import { launchTestD1 } from './launch.ts';

/**
 * The store's atomicity rests on two facts about D1 that no type can promise: a statement that
 * errors rolls back the statements before it in the same `batch()`, and the guard errors only
 * when its condition fails. Checked here against workerd's D1.
 */
let server: Awaited<ReturnType<typeof launchTestD1>>;
let db: D1DatabaseLike;
const t = tableNames('batchsem_');

beforeAll(async () => {
  server = await launchTestD1();
  db = server.db;
  await migrateSchema(db, t);
  await db.prepare('CREATE TABLE scratch (k TEXT PRIMARY KEY, v INTEGER NOT NULL)').all();
});
afterAll(() => server?.stop());

const count = async (sql: string, ...values: unknown[]) =>
  (
    await db
      .prepare(sql)
      .bind(...values)
      .all<{ n: number }>()
  ).results[0]!.n;

describe('D1 batch semantics the store relies on', () => {
  it('a failing statement rolls back the writes before it in the same batch', async () => {
    await expect(
      db.batch([
        db.prepare('INSERT INTO scratch (k, v) VALUES (?, ?)').bind('a', 1),
        db.prepare('UPDATE scratch SET v = v + 1 WHERE k = ?').bind('a'),
        db.prepare(`SELECT json_extract('{}', 'boom:' || v) FROM scratch WHERE k = ?`).bind('a'),
      ]),
    ).rejects.toThrow(/bad JSON path: 'boom:2'/);
    expect(await count('SELECT count(*) AS n FROM scratch')).toBe(0);
  });

  it('a constraint violation in a later statement rolls back earlier ones', async () => {
    await db.prepare('INSERT INTO scratch (k, v) VALUES (?, ?)').bind('taken', 0).all();
    await expect(
      db.batch([
        db.prepare('INSERT INTO scratch (k, v) VALUES (?, ?)').bind('fresh', 1),
        db.prepare('INSERT INTO scratch (k, v) VALUES (?, ?)').bind('taken', 1),
      ]),
    ).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await count('SELECT count(*) AS n FROM scratch WHERE k = ?', 'fresh')).toBe(0);
  });

  it('the append guard passes when head and lease match and names the stored head when they do not', async () => {
    const now = new Date().toISOString();
    const later = new Date(Date.now() + 60_000).toISOString();
    await db
      .prepare(
        `INSERT INTO ${t.sessions} (id, agent_name, state, head_seq, lease_holder, lease_epoch, lease_expires_at,
           created_at, updated_at) VALUES ('g', 'a', 'null', 7, 'h', 3, ?, ?, ?)`,
      )
      .bind(later, now, now)
      .all();
    const guard = (...values: unknown[]) =>
      db
        .prepare(guardSql(t))
        .bind(...values)
        .all();
    await expect(guard('g', 7, 'h', 3)).resolves.toMatchObject({ results: [{ ok: 1 }] });
    await expect(guard('g', 6, 'h', 3)).rejects.toThrow(/seq-conflict:7/);
    await expect(guard('g', 7, 'h', 2)).rejects.toThrow(/lease-lost/);
    await expect(guard('g', 7, 'other', 3)).rejects.toThrow(/lease-lost/);
    // Both wrong: the stale lease wins, so a fenced writer always learns it lost the lease.
    await expect(guard('g', 6, 'h', 2)).rejects.toThrow(/lease-lost/);
    // No token: refused while the lease is live by the database's clock, allowed once it expired.
    await expect(guard('g', 7, null, null)).rejects.toThrow(/lease-lost/);
    await db
      .prepare(`UPDATE ${t.sessions} SET lease_expires_at = ? WHERE id = 'g'`)
      .bind(new Date(Date.now() - 60_000).toISOString())
      .all();
    await expect(guard('g', 7, null, null)).resolves.toMatchObject({ results: [{ ok: 1 }] });
    // A missing session counts as head 0 with no lease.
    await expect(guard('missing', 0, null, null)).resolves.toMatchObject({ results: [{ ok: 1 }] });
    await expect(guard('missing', 1, null, null)).rejects.toThrow(/seq-conflict:0/);
    await expect(guard('missing', 0, 'h', 1)).rejects.toThrow(/lease-lost/);
  });

  it('refuses a statement with more than 100 bound parameters (the limit the INSERT chunking respects)', async () => {
    const params = Array.from({ length: 101 }, (_, i) => i);
    await expect(
      db
        .prepare(`SELECT ${params.map(() => '?').join(', ')}`)
        .bind(...params)
        .all(),
    ).rejects.toThrow(/too many SQL variables/);
  });
});
