import type { LoadResult, NewMessage } from '@agentstore/core';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { deleteSessionItem, freshTable, init, message, sessionId, testClient } from './support/dynamodb.ts';

/*
 * Issue #19: a `load` must return one incarnation of a session, never a mix. A Query spanning
 * 1 MB pages is not a snapshot: its first page may read an old incarnation's leftovers (message
 * items of a session whose item expired or was deleted) and a later page the NEW incarnation's
 * items. Real DynamoDB Local; the only injection is timing: the session is replaced while the
 * loader is between two of its requests.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable(client, 'incarnation');
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const expire = (id: string) => deleteSessionItem(client, table.tableName, id);

/** A client that runs `between` once, after the first response to a command `when` picks. */
function pausingClient(
  when: (command: string, output: { LastEvaluatedKey?: unknown }) => boolean,
  between: () => Promise<void>,
): DynamoDBClient {
  const paused = testClient();
  const send = paused.send.bind(paused);
  let fired = false;
  paused.send = (async (command: { constructor: { name: string } }) => {
    const output = (await send(command as never)) as { LastEvaluatedKey?: unknown };
    if (!fired && when(command.constructor.name, output)) {
      fired = true;
      await between();
    }
    return output;
  }) as typeof paused.send;
  return paused;
}
const betweenQueryPages = (command: string, output: { LastEvaluatedKey?: unknown }) =>
  command === 'QueryCommand' && output.LastEvaluatedKey !== undefined;
const afterFirstQuery = (command: string) => command === 'QueryCommand';
const afterFirstGet = (command: string) => command === 'GetItemCommand';

const writer = () => dynamodbStore({ client, tableName: table.tableName });
const create = (id: string, messages: NewMessage[]) =>
  writer().append(id, { expectedSeq: 0, messages, session: { init: init() }, lease: null });

async function loadWhile(
  id: string,
  when: Parameters<typeof pausingClient>[0],
  between: () => Promise<void>,
): Promise<LoadResult | null> {
  const loaderClient = pausingClient(when, between);
  try {
    return await dynamodbStore({ client: loaderClient, tableName: table.tableName }).load(id);
  } finally {
    loaderClient.destroy();
  }
}

const contents = (loaded: LoadResult | null) => loaded?.messages.map((m) => m.content.slice(0, 6));

it('the attacker’s case: over expired leftovers, a re-create between Query pages gives null or only the new session', async () => {
  const id = sessionId('pages');
  await create(
    id,
    Array.from({ length: 6 }, (_, i) => message(`OLD-${i}-${'o'.repeat(300_000)}`)),
  );
  await expire(id);
  const fresh = Array.from({ length: 6 }, (_, i) => message(`NEW-${i}`));
  const loaded = await loadWhile(id, betweenQueryPages, async () => {
    await create(id, fresh);
  });
  if (loaded !== null) expect(contents(loaded)).toEqual(fresh.map((m) => m.content.slice(0, 6)));
});

for (const [label, when] of [
  ['between Query pages', betweenQueryPages],
  ['right after the first Query page', afterFirstQuery],
  ['between the session read and the Query', afterFirstGet],
] as const) {
  it(`a session replaced ${label} is loaded whole as its new incarnation`, async () => {
    const id = sessionId('replaced');
    const old = Array.from({ length: 6 }, (_, i) => message(`OLD-${i}-${'o'.repeat(300_000)}`));
    await create(id, old);
    const fresh = Array.from({ length: 6 }, (_, i) => message(`NEW-${i}`));
    const loaded = await loadWhile(id, when, async () => {
      await expire(id);
      await create(id, fresh);
    });
    expect(contents(loaded)).toEqual(fresh.map((m) => m.content.slice(0, 6)));
    expect(loaded?.session.headSeq).toBe(6);
  });
}

it('a session deleted between Query pages loads as null, not as a corrupt or half session', async () => {
  const id = sessionId('deleted');
  await create(
    id,
    Array.from({ length: 6 }, () => message('d'.repeat(300_000))),
  );
  const loaded = await loadWhile(id, betweenQueryPages, async () => {
    await writer().deleteSession(id);
  });
  expect(loaded).toBeNull();
});

// A ~1 MB message is a head item and two 380 KB chunks; `filler` moves the page boundary through it.
for (const filler of [0, 200_000, 400_000, 600_000, 800_000]) {
  for (const [label, alive] of [
    ['over expired leftovers', false],
    ['replacing a live session', true],
  ] as const) {
    it(`a chunked message is never spliced from two incarnations (${label}, filler ${filler})`, async () => {
      const id = sessionId('splice');
      const pre = filler > 0 ? [message(`OLDF-${'f'.repeat(filler)}`)] : [];
      const oldBig = message(`OLD-${'o'.repeat(1_000_000)}`);
      await create(id, [...pre, oldBig]);
      if (!alive) await expire(id);
      const newPre = filler > 0 ? [message('NEWF')] : [];
      const newBig = message(`NEW-${'n'.repeat(1_000_000)}`);
      let replaced = false;
      const loaded = await loadWhile(id, betweenQueryPages, async () => {
        if (alive) await expire(id);
        await create(id, [...newPre, newBig]);
        replaced = true;
      });
      if (!alive && loaded === null) return; // absent when first read: a fine answer
      const last = loaded?.messages.at(-1);
      // Without a page boundary in the read, the old session is read whole before any change.
      const whole = replaced
        ? { ids: [...newPre, newBig].map((m) => m.id), o: 0, n: 1_000_000 }
        : { ids: [...pre, oldBig].map((m) => m.id), o: 1_000_000, n: 0 };
      expect({
        ids: loaded?.messages.map((m) => m.id),
        o: last?.content.match(/o/g)?.length ?? 0,
        n: last?.content.match(/n/g)?.length ?? 0,
      }).toEqual(whole);
    });
  }
}
