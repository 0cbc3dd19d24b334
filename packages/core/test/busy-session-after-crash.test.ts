import { describe, expect, it } from 'vitest';
import { defineAgent, isAgentStoreError, run, type SessionBusyError } from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';

// After a crash, the dead process's lease blocks the session until it lapses. The first resume's
// SessionBusyError says how long, whether run() waited, and what to pass; doing what it says works.

const agent = defineAgent({ name: 'resume', instructions: '' });
const init = { agentName: 'resume', ownerId: null, tenantId: null, state: null };

async function crashedHolder(ttlMs: number) {
  const store = durableMemoryStore();
  // The crashed process took the lease and will never renew or release it.
  await store.acquireLease('s', { holder: 'dead', ttlMs, init });
  return store;
}

describe('resuming a session whose holder crashed', () => {
  it('the busy error says what to pass; passing it takes the lease once it lapses', async () => {
    const store = await crashedHolder(400);
    const error = (await run(agent, {
      store,
      sessionId: 's',
      message: 'hi',
      llm: scriptedLlm([{ text: 'done' }]),
    }).then(
      () => null,
      (e: unknown) => e,
    )) as SessionBusyError;
    expect(isAgentStoreError(error, 'SESSION_BUSY')).toBe(true);
    expect(error.waitedMs).toBe(0);
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(error.retryAfterMs).toBeLessThanOrEqual(400);
    const advice = error.message.match(/leaseWaitMs: (\d+)/);
    expect(advice, error.message).not.toBeNull();
    const resumed = await run(agent, {
      store,
      sessionId: 's',
      message: 'hi',
      llm: scriptedLlm([{ text: 'done' }]),
      leaseWaitMs: Number(advice![1]),
    });
    expect(resumed.status).toBe('complete');
  });

  it('a busy error after waiting says it waited', async () => {
    const store = await crashedHolder(60_000);
    const error = (await run(agent, {
      store,
      sessionId: 's',
      message: 'hi',
      llm: scriptedLlm([{ text: 'done' }]),
      leaseWaitMs: 60,
    }).then(
      () => null,
      (e: unknown) => e,
    )) as SessionBusyError;
    expect(isAgentStoreError(error, 'SESSION_BUSY')).toBe(true);
    expect(error.waitedMs).toBeGreaterThanOrEqual(60);
    expect(error.message).toMatch(/run\(\) waited \d+ ms for its lease/);
    expect(isAgentStoreError(error.cause, 'SESSION_BUSY')).toBe(true);
  });
});
