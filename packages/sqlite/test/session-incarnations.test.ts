import { createHash } from 'node:crypto';
import { type AgentStore, defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.ts';
import { init, tempDatabaseDir } from './helpers.ts';

/*
 * Every creation of a session id is a distinct incarnation (`incarnationId`, fixed at creation),
 * and it is part of each tool call's idempotency key: a provider call id like `call_0` that comes
 * back in a session re-created under a deleted one's id gets another key. A session created
 * before the column existed keeps the old key formula, so an upgrade changes no stored call's key.
 */

const dirs: ReturnType<typeof tempDatabaseDir>[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.cleanup();
});
const anyInput = {
  '~standard': { version: 1 as const, vendor: 't', validate: (value: unknown) => ({ value }) },
};

/** Runs one `call_0` on `sessionId` and returns the idempotency key its handler got. */
async function keyOfCall0(store: AgentStore, sessionId: string): Promise<string> {
  let key = '';
  const agent = defineAgent({
    name: 'agent',
    instructions: 'Charge.',
    tools: {
      charge: tool({
        description: 'charges',
        input: anyInput,
        handler: (_input, ctx) => {
          key = ctx.idempotencyKey;
          return 'charged';
        },
      }),
    },
  });
  const llm = scriptedLlm([{ toolCalls: [{ id: 'call_0', name: 'charge', input: {} }] }, { text: 'Done.' }]);
  const result = await run(agent, { store, sessionId, message: 'Charge.', llm });
  expect(result.status).toBe('complete');
  return key;
}

const oldFormula = (sessionId: string, callId: string) =>
  `agentstore_${createHash('sha256').update(`${sessionId}\u0000${callId}`).digest('hex')}`;

describe('session incarnations', () => {
  it('a session re-created under a deleted session’s id gets a new incarnationId and new keys', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const store = sqliteStore({ path: dir.file() });
    try {
      const first = await keyOfCall0(store, 's');
      const firstIncarnation = (await store.load('s'))!.session.incarnationId;
      await store.deleteSession('s');
      const second = await keyOfCall0(store, 's');
      const secondIncarnation = (await store.load('s'))!.session.incarnationId;
      expect(typeof firstIncarnation).toBe('string');
      expect(secondIncarnation).not.toBe(firstIncarnation);
      expect(second).not.toBe(first);
      expect(first).not.toBe(oldFormula('s', 'call_0'));
    } finally {
      await store.close();
    }
  });

  it('a database from before incarnations is upgraded in place; its sessions load and keep the old key formula', async () => {
    const dir = tempDatabaseDir();
    dirs.push(dir);
    const db = new BetterSqlite3(dir.file());
    try {
      const before = sqliteStore({ database: db });
      await before.append('old', {
        expectedSeq: 0,
        messages: [{ id: 'u1', role: 'user', content: 'hi', createdAt: 'x' }],
        session: { init: init({ ownerId: null, tenantId: null }) },
        lease: null,
      });
      // Back to schema version 3: the table as it was before the column existed.
      db.exec(`ALTER TABLE "agentstore_sessions" DROP COLUMN incarnation_id;
        UPDATE "agentstore_schema_version" SET version = 3`);
      const after = sqliteStore({ database: db });
      expect(await after.migrate()).toEqual({ version: 4 });
      const loaded = await after.load('old');
      expect(loaded!.messages.map((m) => m.id)).toEqual(['u1']);
      expect(loaded!.session).not.toHaveProperty('incarnationId');
      expect(await keyOfCall0(after, 'old')).toBe(oldFormula('old', 'call_0'));
      // A session created after the upgrade has one.
      await after.append('new', {
        expectedSeq: 0,
        messages: [{ id: 'u1', role: 'user', content: 'hi', createdAt: 'x' }],
        session: { init: init({ ownerId: null, tenantId: null }) },
        lease: null,
      });
      expect(typeof (await after.load('new'))!.session.incarnationId).toBe('string');
      // Migrating again finds nothing to do.
      expect(await sqliteStore({ database: db }).migrate()).toEqual({ version: 4 });
    } finally {
      db.close();
    }
  });
});
