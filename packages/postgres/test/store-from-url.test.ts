import { expect, it } from 'vitest';
import { storeFromUrl } from '../src/index.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const pg = usePostgres('url');

it('opens the database a postgres:// URL names, with schema and tablePrefix from its query', async () => {
  const writer = await pg.store({ tablePrefix: 'url_' });
  const id = uniqueId();
  const { epoch } = await writer.acquireLease(id, { holder: 'h', ttlMs: 10_000, init: init() });
  await writer.append(id, { expectedSeq: 0, messages: [message('m1')], lease: { holder: 'h', epoch } });
  const url = new URL(pg.url);
  url.searchParams.set('schema', pg.schema);
  url.searchParams.set('tablePrefix', 'url_');
  url.searchParams.set('preparedStatements', 'false');
  const store = storeFromUrl(url.href);
  try {
    expect((await store.load(id))!.messages.map((m) => m.id)).toEqual(['m1']);
    expect((await store.listSessions({ limit: 10, cursor: null })).sessions.map((s) => s.id)).toContain(id);
  } finally {
    await store.close(); // ends the pool it opened
  }
});
