import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from '@agentstore/core';
import BetterSqlite3 from 'better-sqlite3';
import { notADatabase, readSchemaVersion, requireSchema } from './schema.ts';
import { type SqliteStore, sqliteStore } from './sqlite-store.ts';

/**
 * The store a URL names, for tools such as `agentstore inspect`: `file:///abs/agent.db`,
 * `sqlite:///abs/agent.db` or `sqlite:relative/agent.db`, with `?tablePrefix=` when not the
 * default. The file must exist and already hold agentstore's tables: a typo must not create an
 * empty database, and another application's database is refused, never written.
 * `{ readOnly: true }` opens it in SQLite's read-only mode (nothing is ever written).
 */
export function storeFromUrl(url: string, options: { readOnly?: boolean } = {}): SqliteStore {
  const parsed = new URL(url);
  let path: string;
  if (parsed.protocol === 'file:') path = fileURLToPath(parsed);
  else if (parsed.protocol === 'sqlite:') path = decodeURIComponent(parsed.pathname);
  else throw new InvalidArgumentError({ argument: 'url', reason: 'must be a file: or sqlite: URL' });
  if (!existsSync(path)) {
    throw new InvalidArgumentError({ argument: 'url', reason: `names ${path}, which does not exist` });
  }
  const tablePrefix = parsed.searchParams.get('tablePrefix');
  const storeOptions = tablePrefix === null ? {} : { tablePrefix };
  if (options.readOnly === true) return sqliteStore({ path }, { ...storeOptions, readOnly: true });
  // Checked on a read-only connection first, so a foreign file is refused before anything is
  // written; an older agentstore schema is fine here (the writable store upgrades it).
  const probe = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    if (readSchemaVersion(probe, storeOptions.tablePrefix) === null)
      requireSchema(probe, { ...storeOptions, path });
  } catch (error) {
    throw notADatabase(error, path);
  } finally {
    probe.close();
  }
  return sqliteStore({ path }, storeOptions);
}
