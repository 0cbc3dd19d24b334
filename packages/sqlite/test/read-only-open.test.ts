import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgentStoreError } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore, storeFromUrl } from '../src/index.ts';
import { init, messages, tempDatabaseDir } from './helpers.ts';

const dir = tempDatabaseDir();
afterAll(() => dir.cleanup());

/** Another application's database: one table of its own, rollback journal (not WAL). */
function foreignDatabase(name: string): string {
  const path = dir.file(name);
  const db = new BetterSqlite3(path);
  db.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)');
  db.close();
  return path;
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const filesBeside = (path: string) =>
  readdirSync(dirname(path)).filter((f) => f.startsWith(`${path.split('/').at(-1)}`));

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('opening an existing file read-only', () => {
  it("refuses another application's database with SCHEMA_MISSING and leaves the file byte for byte as it was", () => {
    const path = foreignDatabase('other-app.db');
    const before = digest(path);
    for (const open of [
      () => storeFromUrl(pathToFileURL(path).href, { readOnly: true }),
      () => storeFromUrl(pathToFileURL(path).href),
      () => sqliteStore({ path }, { readOnly: true }),
    ]) {
      const error = thrown(open);
      expect(isAgentStoreError(error, 'SCHEMA_MISSING')).toBe(true);
      expect((error as Error).message).toContain(`in ${path}`);
      expect((error as Error).message).toMatch(/not an agentstore database/);
    }
    expect(digest(path)).toBe(before);
    // No WAL switch, no side files left behind.
    expect(filesBeside(path)).toEqual(['other-app.db']);
    const db = new BetterSqlite3(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([
      'invoices',
    ]);
    db.close();
  });

  it('a file that is not a database is an INVALID_ARGUMENT naming it, never a raw SqliteError', () => {
    const path = dir.file('notes.txt');
    writeFileSync(path, 'not a database\n'.repeat(100));
    for (const open of [
      () => storeFromUrl(`sqlite:${path}`, { readOnly: true }),
      () => storeFromUrl(`sqlite:${path}`),
      () => sqliteStore({ path }),
    ]) {
      const error = thrown(open);
      expect(isAgentStoreError(error, 'INVALID_ARGUMENT')).toBe(true);
      expect((error as Error).message).toBe(`Invalid path: ${path} is not a SQLite database`);
    }
  });

  it('reads an agentstore database written by the store, and points at the prefix its tables use', async () => {
    const path = dir.file('agent.db');
    const writer = sqliteStore({ path }, { tablePrefix: 'app_' });
    const { epoch } = await writer.acquireLease('s', { holder: 'h', ttlMs: 10_000, init: init() });
    await writer.append('s', { expectedSeq: 0, messages: messages('m', 3), lease: { holder: 'h', epoch } });
    await writer.close();
    const before = digest(path);
    const reader = storeFromUrl(`sqlite:${path}?tablePrefix=app_`, { readOnly: true });
    expect(reader.database.readonly).toBe(true);
    expect((await reader.load('s'))!.messages.map((m) => m.id)).toEqual(['m-0', 'm-1', 'm-2']);
    expect((await reader.listSessions({ limit: 10 })).sessions.map((s) => s.id)).toEqual(['s']);
    await reader.close();
    expect(digest(path)).toBe(before);
    const wrongPrefix = thrown(() => storeFromUrl(`sqlite:${path}`, { readOnly: true }));
    expect(isAgentStoreError(wrongPrefix, 'SCHEMA_MISSING')).toBe(true);
    expect((wrongPrefix as Error).message).toContain('tables with prefix app_');
  });

  it('agentstore inspect on a foreign file: one line naming the problem, exit 2, the file untouched', () => {
    const path = foreignDatabase('inspected.db');
    const before = digest(path);
    const bin = join(import.meta.dirname, '../node_modules/@agentstore/core/src/cli/agentstore.ts');
    // Run from this package, whose own name resolves to the adapter the CLI loads.
    const cwd = join(import.meta.dirname, '..');
    for (const command of [
      ['inspect', path, 's'],
      ['sessions', path],
      ['retention', path, '--idle-days', '1'],
    ]) {
      const result = spawnSync(process.execPath, ['--conditions=@agentstore/source', bin, ...command], {
        cwd,
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`agentstore's tables (prefix agentstore_) in ${path} does not exist`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(digest(path)).toBe(before);
    expect(filesBeside(path)).toEqual(['inspected.db']);
  });
});
