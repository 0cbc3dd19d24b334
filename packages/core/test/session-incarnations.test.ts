import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AgentStore, defineAgent, run, tool } from '../src/index.ts';
import { idempotencyKeyFor } from '../src/loop/idempotency.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

/*
 * A session id can be deleted (or swept by retention) and used again; each creation is a distinct
 * incarnation, and idempotency keys must tell them apart even though providers reuse call ids
 * like `call_0`. Keys of sessions that have no incarnation (created before stores recorded one)
 * keep the formula their calls started with.
 */

const anyInput = {
  '~standard': { version: 1 as const, vendor: 't', validate: (value: unknown) => ({ value }) },
};

async function keyOfCall0(store: AgentStore, sessionId: string): Promise<string> {
  let key = '';
  const agent = defineAgent({
    name: 'agent',
    instructions: '',
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
  expect((await run(agent, { store, sessionId, message: 'Charge.', llm })).status).toBe('complete');
  return key;
}

describe('idempotency keys across incarnations of a session id', () => {
  it('the memory store gives a re-created session a new incarnationId, and its call_0 a new key', async () => {
    const store = durableMemoryStore();
    const first = await keyOfCall0(store, 's');
    const firstIncarnation = (await store.load('s'))!.session.incarnationId;
    await store.deleteSession('s');
    const second = await keyOfCall0(store, 's');
    expect(typeof firstIncarnation).toBe('string');
    expect((await store.load('s'))!.session.incarnationId).not.toBe(firstIncarnation);
    expect(second).not.toBe(first);
  });

  it('the key formula: without an incarnation it is the original sha256(session id, NUL, call id)', async () => {
    const old = `agentstore_${createHash('sha256').update('s\u0000call_0').digest('hex')}`;
    expect(await idempotencyKeyFor('s', 'call_0')).toBe(old);
    expect(await idempotencyKeyFor('s', 'call_0', null)).toBe(old);
    const scoped = await idempotencyKeyFor('s', 'call_0', 'incarnation-a');
    expect(scoped).toMatch(/^agentstore_[0-9a-f]{64}$/);
    expect(scoped).not.toBe(old);
    expect(await idempotencyKeyFor('s', 'call_0', 'incarnation-b')).not.toBe(scoped);
    expect(await idempotencyKeyFor('s', 'call_0', 'incarnation-a')).toBe(scoped);
  });
});
