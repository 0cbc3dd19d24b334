import { createHash } from 'node:crypto';
import { type AgentStore, defineAgent, run, type SessionInit, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { d1Store } from '../src/index.ts';
import { launchTestD1, message } from './launch.ts';

/*
 * Every creation of a session id is a distinct incarnation (`incarnationId`, fixed at creation),
 * and it is part of each tool call's idempotency key: a provider call id like `call_0` that comes
 * back in a session re-created under a deleted one's id gets another key. A session created
 * before the column existed keeps the old key formula, so an upgrade changes no stored call's key.
 */

const init: SessionInit = { agentName: 'agent', ownerId: null, tenantId: null, state: null };
const anyInput = {
  '~standard': { version: 1 as const, vendor: 't', validate: (value: unknown) => ({ value }) },
};
let server: Awaited<ReturnType<typeof launchTestD1>>;
beforeAll(async () => {
  server = await launchTestD1();
});
afterAll(() => server?.stop());

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
    const store = d1Store({ binding: server.db }, { tablePrefix: 'inc_' });
    await store.migrate();
    const first = await keyOfCall0(store, 's');
    const firstIncarnation = (await store.load('s'))!.session.incarnationId;
    await store.deleteSession('s');
    const second = await keyOfCall0(store, 's');
    expect(typeof firstIncarnation).toBe('string');
    expect((await store.load('s'))!.session.incarnationId).not.toBe(firstIncarnation);
    expect(second).not.toBe(first);
  });

  it('a database from before incarnations is upgraded in place; its sessions load and keep the old key formula', async () => {
    const before = d1Store({ binding: server.db }, { tablePrefix: 'old_' });
    await before.migrate();
    await before.append('old', { expectedSeq: 0, messages: [message('u1')], session: { init }, lease: null });
    // Back to schema version 3: the table as it was before the column existed.
    await server.db.prepare('ALTER TABLE "old_sessions" DROP COLUMN incarnation_id').all();
    await server.db.prepare('UPDATE "old_schema_version" SET version = 3').all();
    const after = d1Store({ binding: server.db }, { tablePrefix: 'old_' });
    expect(await after.migrate()).toEqual({ version: 4 });
    const loaded = await after.load('old');
    expect(loaded!.messages.map((m) => m.id)).toEqual(['u1']);
    expect(loaded!.session).not.toHaveProperty('incarnationId');
    expect(await keyOfCall0(after, 'old')).toBe(oldFormula('old', 'call_0'));
    expect(await after.migrate()).toEqual({ version: 4 });
  });
});
