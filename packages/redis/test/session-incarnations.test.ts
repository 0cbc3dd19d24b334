import { createHash } from 'node:crypto';
import { type AgentStore, defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import { type LaunchedRedis, launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../src/index.ts';
import { keySpace } from '../src/keys.ts';
import { init, msg, uniquePrefix } from './helpers.ts';

/*
 * Every creation of a session id is a distinct incarnation (`incarnationId`, fixed at creation),
 * and it is part of each tool call's idempotency key: a provider call id like `call_0` that comes
 * back in a session re-created under a deleted one's id gets another key. A session created
 * before the field existed keeps the old key formula, so an upgrade changes no stored call's key.
 */

let server: LaunchedRedis;
beforeAll(async () => {
  server = await launchRedis();
});
afterAll(() => server?.stop());
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
    const store = redisStore({ url: server.info.url }, { keyPrefix: uniquePrefix('inc') });
    try {
      const first = await keyOfCall0(store, 's');
      const firstIncarnation = (await store.load('s'))!.session.incarnationId;
      await store.deleteSession('s');
      const second = await keyOfCall0(store, 's');
      expect(typeof firstIncarnation).toBe('string');
      expect((await store.load('s'))!.session.incarnationId).not.toBe(firstIncarnation);
      expect(second).not.toBe(first);
    } finally {
      await store.close();
    }
  });

  it('a session stored before incarnations loads without one and keeps the old key formula', async () => {
    const keyPrefix = uniquePrefix('old');
    const store = redisStore({ url: server.info.url }, { keyPrefix });
    const raw = new Redis(server.info.url);
    try {
      await store.append('old', {
        expectedSeq: 0,
        messages: [msg()],
        session: { init: init() },
        lease: null,
      });
      // As an earlier version wrote it: no incarnationId field.
      expect(await raw.hdel(keySpace(keyPrefix).session('old').session, 'incarnationId')).toBe(1);
      expect((await store.load('old'))!.session).not.toHaveProperty('incarnationId');
      expect(await keyOfCall0(store, 'old')).toBe(oldFormula('old', 'call_0'));
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});
