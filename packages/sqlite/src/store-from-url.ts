import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from '@agentstore/core';
import { type SqliteStore, sqliteStore } from './sqlite-store.ts';

/**
 * The store a URL names, for tools such as `agentstore inspect`: `file:///abs/agent.db`,
 * `sqlite:///abs/agent.db` or `sqlite:relative/agent.db`, with `?tablePrefix=` when not the
 * default. The file must exist: a typo must not create an empty database.
 */
export function storeFromUrl(url: string): SqliteStore {
  const parsed = new URL(url);
  let path: string;
  if (parsed.protocol === 'file:') path = fileURLToPath(parsed);
  else if (parsed.protocol === 'sqlite:') path = decodeURIComponent(parsed.pathname);
  else throw new InvalidArgumentError({ argument: 'url', reason: 'must be a file: or sqlite: URL' });
  if (!existsSync(path)) {
    throw new InvalidArgumentError({ argument: 'url', reason: `names ${path}, which does not exist` });
  }
  const tablePrefix = parsed.searchParams.get('tablePrefix');
  return sqliteStore({ path }, tablePrefix === null ? {} : { tablePrefix });
}
