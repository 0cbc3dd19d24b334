import { describe, expect, it } from 'vitest';
import * as app from '../src/index.ts';
import {
  isAgentStoreError,
  SchemaVersionError,
  SeqConflictError,
  UnexpectedReplyError,
} from '../src/index.ts';
import * as store from '../src/store/index.ts';
import {
  SQLITE_SCHEMA_VERSION,
  sqliteLeaseFree,
  sqliteLeaseHeld,
  sqliteMigrationPlan,
  sqliteSchemaStatements,
  sqliteTableNames,
} from '../src/store/index.ts';

describe('errors are recognised by code', () => {
  it('an error of another installed copy of core (same code, another class) is recognised', () => {
    class ForeignSeqConflict extends Error {
      readonly code = 'SEQ_CONFLICT' as const;
    }
    const foreign = new ForeignSeqConflict('from another copy');
    expect(foreign).not.toBeInstanceOf(SeqConflictError);
    expect(isAgentStoreError(foreign, 'SEQ_CONFLICT')).toBe(true);
    expect(isAgentStoreError(foreign, 'LEASE_LOST')).toBe(false);
    expect(isAgentStoreError(foreign)).toBe(true);
    expect(isAgentStoreError({ code: 'SEQ_CONFLICT' })).toBe(false);
    expect(isAgentStoreError(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false);
  });

  it('an unexpected server reply is a typed error naming the store, the operation and the reply', () => {
    const error = new UnexpectedReplyError({
      store: '@agentstore/redis',
      operation: 'append',
      reply: ['WHAT', 'x'.repeat(500)],
      sessionId: 's1',
    });
    expect(isAgentStoreError(error, 'UNEXPECTED_REPLY')).toBe(true);
    expect(error).toMatchObject({ store: '@agentstore/redis', operation: 'append' });
    expect(error.reply.length).toBeLessThanOrEqual(201);
    expect(error.message).toMatch(
      /^@agentstore\/redis: unexpected reply to append of session "s1": \["WHAT"/,
    );
  });

  it('a schema newer than the package is SCHEMA_VERSION_UNSUPPORTED, in the family', () => {
    const error = new SchemaVersionError(3, 1);
    expect(isAgentStoreError(error, 'SCHEMA_VERSION_UNSUPPORTED')).toBe(true);
    expect(error).toMatchObject({ found: 3, supported: 1 });
  });
});

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

describe('two entries: the application API and the store author’s', () => {
  it('the store entry carries validators, lease rules, codecs and the SQLite dialect', () => {
    for (const name of [
      'validateAppendInput',
      'validateSessionId',
      'canAcquireLease',
      'appendLeaseMatches',
      'decodeStoredMessage',
      'decodeSessionColumns',
      'messageByteLength',
      'sqliteTableNames',
    ]) {
      expect(typeof (store as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('the main entry has the application API and no way to claim durability in memory', () => {
    for (const name of [
      'run',
      'tool',
      'defineAgent',
      'memoryStore',
      'isAgentStoreError',
      'SchemaValidationError',
    ]) {
      expect((app as Record<string, unknown>)[name], name).toBeDefined();
    }
    expect((app as Record<string, unknown>).createInMemoryStore).toBeUndefined();
  });
});
