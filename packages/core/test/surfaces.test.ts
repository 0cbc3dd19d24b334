import { describe, expect, it } from 'vitest';
import * as app from '../src/index.ts';
import {
  isAgentStoreError,
  SchemaVersionError,
  SeqConflictError,
  UnexpectedReplyError,
} from '../src/index.ts';
import * as store from '../src/store/index.ts';

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

describe('two entries: the application API and the store author’s', () => {
  it('the store entry carries the boundary, validators, lease rules and codecs, and no SQL', () => {
    for (const name of [
      'validateAppendInput',
      'validateSessionId',
      'canAcquireLease',
      'appendLeaseMatches',
      'decodeStoredMessage',
      'decodeSessionColumns',
      'messageByteLength',
      'defineStore',
    ]) {
      expect(typeof (store as Record<string, unknown>)[name], name).toBe('function');
    }
    // The SQLite dialect is @agentstore/sqlite-dialect's, not part of core's API.
    expect(Object.keys(store).filter((name) => /sqlite/i.test(name))).toEqual([]);
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
