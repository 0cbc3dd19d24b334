// The studio never reads a whole table or a whole session to list or summarise: every store call
// it makes is bounded by a page.
import type { AgentStore } from '@agentstore/core';
import { sqliteStore } from '@agentstore/sqlite';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createApi } from '../src/server/api.ts';
import { LONG_MESSAGES, LONG_SESSION } from './fixtures/seed.ts';

let store: AgentStore;
const loads: { id: string; afterSeq: number; returned: number }[] = [];
const lists: number[] = [];

beforeAll(() => {
  const inner = sqliteStore({ path: inject('dbPath') }, { readOnly: true });
  store = {
    ...inner,
    async load(id, options) {
      const loaded = await inner.load(id, options);
      loads.push({ id, afterSeq: options?.afterSeq ?? 0, returned: loaded?.messages.length ?? 0 });
      return loaded;
    },
    async listSessions(input) {
      lists.push(input.limit);
      return inner.listSessions(input);
    },
  };
});
afterAll(() => store?.close());

const get = (path: string, query = '') => createApi(store, {}).handle(path, new URLSearchParams(query));

it('lists one store page and reads only the last step of each session on it', async () => {
  loads.length = 0;
  const answer = await get('/api/sessions', 'agent=looper&limit=5');
  expect((answer.body as { sessions: { id: string; status: string }[] }).sessions).toMatchObject([
    { id: LONG_SESSION, status: 'complete' },
  ]);
  expect(lists).toEqual([5]);
  // The 10,000-message session's status came from its tail.
  expect(loads).toEqual([{ id: LONG_SESSION, afterSeq: LONG_MESSAGES - 32, returned: 32 }]);
});

it('summarises a long session from its tail and sends one page of messages', async () => {
  loads.length = 0;
  const summary = await get(`/api/sessions/${LONG_SESSION}`);
  expect(summary.body).toMatchObject({ status: 'complete', viewSeq: LONG_MESSAGES });
  expect(loads.map((l) => l.returned)).toEqual([0, 32]);

  const page = await get(`/api/sessions/${LONG_SESSION}/messages`, 'afterSeq=9000&limit=200');
  const seqs = (page.body as { messages: { seq: number }[] }).messages.map((m) => m.seq);
  expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => 9001 + i));
});

it('refuses parameters out of range before reading the store', async () => {
  loads.length = 0;
  expect(await get('/api/sessions', 'limit=1000')).toEqual({
    status: 400,
    body: { error: 'limit takes a whole number from 1 to 100, not "1000"' },
  });
  expect(await get('/api/sessions', 'status=bogus')).toMatchObject({ status: 400 });
  expect(await get(`/api/sessions/${LONG_SESSION}/messages`, 'afterSeq=-1')).toMatchObject({ status: 400 });
  expect(await get('/api/sessions/%E0%A4')).toMatchObject({ status: 400 });
  expect(loads).toEqual([]);
});
