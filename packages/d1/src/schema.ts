import {
  SQLITE_SCHEMA_VERSION,
  type SqliteTableNames,
  sqliteMigrationPlan,
  sqliteSelectVersionSql,
  sqliteVersionTableSql,
} from '@agentstore/sqlite-dialect';
import type { D1DatabaseLike } from './d1-binding.ts';

/**
 * Creates the tables when missing and records the schema version. Idempotent and safe to run
 * from several workers at once: every statement is `IF NOT EXISTS` or an upsert, and the
 * version-1 statements run in one batch (one transaction).
 */
export async function migrateSchema(db: D1DatabaseLike, t: SqliteTableNames): Promise<{ version: number }> {
  await db.prepare(sqliteVersionTableSql(t)).all();
  const { results } = await db.prepare(sqliteSelectVersionSql(t)).all<{ version: number }>();
  const plan = sqliteMigrationPlan(t, results[0]?.version ?? 0);
  if (plan.length === 0) return { version: SQLITE_SCHEMA_VERSION };
  try {
    await db.batch(plan.map((sql) => db.prepare(sql)));
  } catch (error) {
    // Another worker's upgrade landed between our read and our batch (its ADD COLUMN makes ours
    // fail, and our batch rolled back): fine when the version it recorded is current.
    const again = await db.prepare(sqliteSelectVersionSql(t)).all<{ version: number }>();
    if (again.results[0]?.version !== SQLITE_SCHEMA_VERSION) throw error;
  }
  return { version: SQLITE_SCHEMA_VERSION };
}
