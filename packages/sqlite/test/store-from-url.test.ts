import { pathToFileURL } from 'node:url';
import { isAgentStoreError } from '@agentstore/core';
import { afterAll, expect, it } from 'vitest';
import { sqliteStore, storeFromUrl } from '../src/index.ts';
import { init, messages, tempDatabaseDir } from './helpers.ts';

const dir = tempDatabaseDir();
afterAll(() => dir.cleanup());

it('opens the file a file: or sqlite: URL names, with its table prefix, and reads what was written', async () => {
  const path = dir.file('url.db');
  const writer = sqliteStore({ path }, { tablePrefix: 'app_' });
  const { epoch } = await writer.acquireLease('s', { holder: 'h', ttlMs: 10_000, init: init() });
  await writer.append('s', { expectedSeq: 0, messages: messages('m', 2), lease: { holder: 'h', epoch } });
  await writer.close();
  for (const url of [`${pathToFileURL(path).href}?tablePrefix=app_`, `sqlite:${path}?tablePrefix=app_`]) {
    const store = storeFromUrl(url);
    expect((await store.load('s'))!.session.headSeq).toBe(2);
    await store.close();
  }
});

it('refuses a file that does not exist rather than creating an empty database', () => {
  const missing = dir.file('typo.db');
  expect(() => storeFromUrl(`sqlite:${missing}`)).toThrow(/does not exist/);
  const error = (() => {
    try {
      storeFromUrl(pathToFileURL(missing).href);
      return null;
    } catch (e) {
      return e;
    }
  })();
  expect(isAgentStoreError(error, 'INVALID_ARGUMENT')).toBe(true);
});
