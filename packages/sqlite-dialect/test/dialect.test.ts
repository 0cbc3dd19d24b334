import { SchemaVersionError } from '@agentstore/core';
import { describe, expect, it } from 'vitest';
import {
  SQLITE_SCHEMA_VERSION,
  sqliteLeaseFree,
  sqliteLeaseHeld,
  sqliteMigrationPlan,
  sqliteSchemaStatements,
  sqliteTableNames,
} from '../src/index.ts';

describe('the SQLite dialect shared by @agentstore/sqlite and @agentstore/d1', () => {
  it('holds table prefixes to one rule and quotes the names', () => {
    expect(sqliteTableNames('app_')).toMatchObject({
      sessions: '"app_sessions"',
      messages: '"app_messages"',
    });
    for (const bad of ['', '_x', '1a', 'a-b', 'sqlite_x', 'SQLITE_x', 'a"b', 'x'.repeat(49)]) {
      expect(() => sqliteTableNames(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    expect(() => sqliteTableNames('x'.repeat(48))).not.toThrow();
  });

  it('plans a migration from the version found: all of it, nothing, or a typed refusal', () => {
    const t = sqliteTableNames();
    expect(sqliteMigrationPlan(t, 0).at(-1)).toMatch(/INSERT INTO "agentstore_schema_version"/);
    expect(sqliteMigrationPlan(t, SQLITE_SCHEMA_VERSION)).toEqual([]);
    expect(() => sqliteMigrationPlan(t, SQLITE_SCHEMA_VERSION + 1)).toThrow(SchemaVersionError);
    expect(sqliteSchemaStatements({ tablePrefix: 'w_' })[0]).toMatch(
      /CREATE TABLE IF NOT EXISTS "w_schema_version"/,
    );
  });

  it('builds the lease guards with each driver’s placeholders', () => {
    expect(sqliteLeaseFree({ now: '@now' })).toBe(
      "(lease_holder IS NULL OR (lease_expires_at <= @now AND lease_expires_at NOT GLOB '+*'))",
    );
    expect(sqliteLeaseHeld({ holder: '?3', epoch: '?4' }, 's.')).toBe(
      '(s.lease_holder IS ?3 AND s.lease_epoch IS ?4)',
    );
  });
});
