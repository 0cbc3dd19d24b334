import { describe, expect, it } from 'vitest';
import { defineAgent, type InvalidArgumentError, isAgentStoreError, run } from '../src/index.ts';
import { durableMemoryStore, faultyStore, scriptedLlm } from '../src/testing/index.ts';

/* Attack (issue 14): hostile leaseWaitMs / leaseTtlMs values on run(). */
const chat = defineAgent({ name: 'chat', instructions: '' });
const init = { agentName: 'chat', ownerId: null, tenantId: null, state: null };

describe('hostile lease values on run()', () => {
  it.each([
    ['NaN', Number.NaN],
    ['-1', -1],
    ['-0.5', -0.5],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['a string', '100' as unknown as number],
    // Past a timer's range or fractional: refused too (docs: an integer from 0 to 2^31 − 1).
    ['0.5', 0.5],
    ['2^31', 2 ** 31],
    ['3e14', 3e14],
    ['MAX_SAFE_INTEGER', Number.MAX_SAFE_INTEGER],
  ])('leaseWaitMs %s is refused with InvalidArgumentError before any store call', async (_, leaseWaitMs) => {
    const store = faultyStore(durableMemoryStore(), {
      op: 'load',
      call: 99,
      when: 'before',
      effect: 'crash',
    });
    const error = await run(chat, {
      store,
      sessionId: 'w',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseWaitMs,
    }).catch((e: unknown) => e);
    expect(isAgentStoreError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as InvalidArgumentError).argument).toBe('leaseWaitMs');
    expect(store.calls.acquireLease).toBe(0);
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['2^31 − 1 (the longest)', 2 ** 31 - 1],
  ])(
    'leaseWaitMs %s on a busy session: a refusal with retryAfterMs, or a prompt take once released',
    async (_, leaseWaitMs) => {
      const store = durableMemoryStore();
      const { epoch } = await store.acquireLease('busy', { holder: 'first', ttlMs: 600_000, init });
      const waiting = run(chat, {
        store,
        sessionId: 'busy',
        message: 'hi',
        llm: scriptedLlm([{ text: 'a' }]),
        leaseWaitMs,
      }).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.releaseLease('busy', { holder: 'first', epoch });
      const outcome = await waiting;
      if (leaseWaitMs < 5) {
        // Short waits may have given up before the release; they must say so with a bounded retry hint.
        if (isAgentStoreError(outcome, 'SESSION_BUSY')) {
          expect(outcome.retryAfterMs).toBeGreaterThan(0);
          expect(outcome.retryAfterMs).toBeLessThanOrEqual(600_000);
          return;
        }
      }
      expect((outcome as { status: string }).status).toBe('complete');
    },
  );

  it('a huge leaseWaitMs still ends when the caller aborts', async () => {
    const store = durableMemoryStore();
    await store.acquireLease('busy2', { holder: 'first', ttlMs: 600_000, init });
    const controller = new AbortController();
    const waiting = run(chat, {
      store,
      sessionId: 'busy2',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseWaitMs: 2 ** 31 - 1,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort(new Error('stop waiting'));
    expect(((await waiting) as Error).message).toBe('stop waiting');
  });
});
