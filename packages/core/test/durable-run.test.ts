import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineAgent,
  LeaseLostError,
  MemoryStoreNotDurableError,
  memoryStore,
  run,
  SessionAccessDeniedError,
  SessionBusyError,
  SessionNotFoundError,
  tool,
} from '../src/index.ts';
import {
  crashAfterToolResults,
  durableMemoryStore,
  faultyStore,
  isSimulatedCrash,
  type ScriptStep,
  scriptedLlm,
  unreachableLlm,
} from '../src/testing/index.ts';
import { resumeUntilComplete, sideEffectLedger, triageAgent } from './fixtures.ts';

// Long enough that a stalled event loop on a loaded CI machine cannot lose a live lease; short
// enough that a resume waiting out a crashed holder's lease stays quick.
const TTL = 300;

describe('crash and resume (the @vertz/agents acceptance scenarios)', () => {
  it('runs a side-effecting tool exactly once across crash + resume, and the model sees the durability error', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'slack-1', name: 'postSlack', input: { text: 'outage' } }] },
      { text: 'Posted.' },
    ]);
    await expect(
      run(agent, {
        store: crashAfterToolResults(store, 2),
        sessionId: 's1',
        message: 'go',
        llm,
        leaseTtlMs: TTL,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    expect(ledger.count('slack-1')).toBe(1);

    const resumed = await resumeUntilComplete(agent, { store, sessionId: 's1', llm, leaseTtlMs: TTL });
    expect(resumed.status).toBe('complete');
    expect(ledger.count('slack-1')).toBe(1);
    const result = resumed.messages.find((m) => m.role === 'tool' && m.toolCallId === 'slack-1');
    expect(result?.kind).toBe('tool-durability-error');
    expect(JSON.parse(result!.content)).toMatchObject({ code: 'TOOL_DURABILITY', toolName: 'postSlack' });
    // The model's next request carried the durability error as the call's result.
    const seen = llm.requests.at(-1)!.find((m) => m.toolCallId === 'slack-1');
    expect(seen?.content).toContain('TOOL_DURABILITY');
  });

  it('re-invokes a safeToRetry tool on resume and stores its real result', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'look-1', name: 'lookup', input: { customer: 'acme' } }] },
      { text: 'Acme is on pro.' },
    ]);
    await expect(
      run(agent, {
        store: crashAfterToolResults(store),
        sessionId: 's2',
        message: 'who?',
        llm,
        leaseTtlMs: TTL,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    const resumed = await resumeUntilComplete(agent, { store, sessionId: 's2', llm, leaseTtlMs: TTL });
    expect(resumed.response).toBe('Acme is on pro.');
    expect(ledger.calls.map((c) => c.attempt)).toEqual([1, 2]);
    const stored = await store.load('s2');
    const result = stored!.messages.find((m) => m.toolCallId === 'look-1')!;
    expect(result.role).toBe('tool');
    expect(result.kind).toBeUndefined();
    expect(JSON.parse(result.content)).toEqual({ customer: 'acme', plan: 'pro' });
  });

  it('ctx.attempt is 2 on every re-invocation, however many runs were interrupted before (no count is kept)', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'look-1', name: 'lookup', input: { customer: 'acme' } }] },
      { text: 'Acme is on pro.' },
    ]);
    const options = { sessionId: 's2-twice', llm, leaseTtlMs: TTL };
    await expect(
      run(agent, { ...options, store: crashAfterToolResults(store), message: 'who?' }),
    ).rejects.toSatisfy(isSimulatedCrash);
    // The first resume dies too, before its result (its first append) lands; it waits out the
    // crashed run's short lease first.
    const crashedResume = async (): Promise<unknown> => {
      try {
        return await run(agent, { ...options, store: crashAfterToolResults(store, 1) });
      } catch (error) {
        if (!(error instanceof SessionBusyError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs + 5));
        return crashedResume();
      }
    };
    await expect(crashedResume()).rejects.toSatisfy(isSimulatedCrash);
    const resumed = await resumeUntilComplete(agent, { ...options, store });
    expect(resumed.response).toBe('Acme is on pro.');
    expect(ledger.calls.map((c) => c.attempt)).toEqual([1, 2, 2]);
    const result = (await store.load('s2-twice'))!.messages.find((m) => m.toolCallId === 'look-1')!;
    expect(result.origin).toEqual({ via: 'handler', attempt: 2 });
  });

  it('settles an orphan through reconcile without re-running the handler; the idempotency key is stable', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'pay-1', name: 'charge', input: { cents: 500 } }] },
      { text: 'Paid.' },
    ]);
    await expect(
      run(agent, {
        store: crashAfterToolResults(store),
        sessionId: 's3',
        message: 'pay',
        llm,
        leaseTtlMs: TTL,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    const firstKey = ledger.calls[0]!.idempotencyKey;
    const resumed = await resumeUntilComplete(agent, { store, sessionId: 's3', llm, leaseTtlMs: TTL });
    expect(resumed.status).toBe('complete');
    expect(ledger.count('pay-1')).toBe(1);
    const result = resumed.messages.find((m) => m.toolCallId === 'pay-1')!;
    expect(JSON.parse(result.content)).toEqual({ charged: 500, key: firstKey });
  });

  it('runs the handler again with the same idempotency key when reconcile finds nothing happened', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const keys: string[] = [];
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'pay-2', name: 'charge', input: { cents: 7 } }] },
      { text: 'ok' },
    ]);
    // Crash after write #1 but before the handler: the store dies at the first renew/append after it.
    const crashing = faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' });
    const slowAgent = defineAgent({
      ...agent,
      tools: {
        charge: tool({
          ...agent.tools.charge!,
          handler: async (input: { cents: number }, ctx) => {
            keys.push(ctx.idempotencyKey);
            if (keys.length === 1) throw new Error('network down before the charge was sent');
            return agent.tools.charge!.handler(input, ctx);
          },
        }),
      },
    });
    // First attempt: the handler fails without effect; its error result commit crashes the process.
    await expect(
      run(slowAgent, { store: crashing, sessionId: 's3b', message: 'pay', llm, leaseTtlMs: TTL }),
    ).rejects.toSatisfy(isSimulatedCrash);
    const resumed = await resumeUntilComplete(slowAgent, { store, sessionId: 's3b', llm, leaseTtlMs: TTL });
    expect(resumed.status).toBe('complete');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(ledger.calls.filter((c) => c.tool === 'charge').map((c) => c.attempt)).toEqual([2]);
  });
});

describe('lost acknowledgements', () => {
  it('resolves an ack lost after commit at every append of a 3-step run by re-reading: no duplicates, no second handler call', async () => {
    const script: ScriptStep[] = [
      {
        toolCalls: [
          { id: 'a', name: 'postSlack', input: { text: 'one' } },
          { id: 'b', name: 'lookup', input: { customer: 'acme' } },
        ],
      },
      { toolCalls: [{ id: 'c', name: 'charge', input: { cents: 100 } }] },
      { toolCalls: [{ id: 'd', name: 'postSlack', input: { text: 'two' } }] },
      { text: 'All done.' },
    ];
    const clean = durableMemoryStore();
    const counting = faultyStore(clean, {
      op: 'append',
      call: Number.MAX_SAFE_INTEGER,
      when: 'after',
      effect: 'ack-lost',
    });
    await run(triageAgent(sideEffectLedger()), {
      store: counting,
      sessionId: 'clean',
      message: 'go',
      llm: scriptedLlm(script),
    });
    const appends = counting.calls.append;
    expect(appends).toBeGreaterThanOrEqual(6);

    for (let k = 1; k <= appends; k++) {
      const store = durableMemoryStore();
      const ledger = sideEffectLedger();
      const faulty = faultyStore(store, { op: 'append', call: k, when: 'after', effect: 'ack-lost' });
      const result = await run(triageAgent(ledger), {
        store: faulty,
        sessionId: `ack-${k}`,
        message: 'go',
        llm: scriptedLlm(script),
      });
      expect(faulty.tripped).toBe(true);
      expect(result.status).toBe('complete');
      for (const id of ['a', 'b', 'c', 'd']) expect(ledger.count(id)).toBe(1);
      const stored = (await store.load(`ack-${k}`))!;
      const ids = stored.messages.map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(stored.messages.map((m) => m.seq)).toEqual(ids.map((_, i) => i + 1));
      expect(stored.messages.filter((m) => m.role === 'tool')).toHaveLength(4);
      expect(stored.session.lease).toBeNull();
    }
  });

  it('retries an append that provably did not land (connection refused before send)', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const faulty = faultyStore(store, { op: 'append', call: 1, when: 'before', effect: 'ack-lost' });
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'x', name: 'postSlack', input: { text: 'hi' } }] },
      { text: 'ok' },
    ]);
    const result = await run(triageAgent(ledger), {
      store: faulty,
      sessionId: 'refused',
      message: 'go',
      llm,
    });
    expect(result.status).toBe('complete');
    expect(ledger.count('x')).toBe(1);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});

describe('single writer', () => {
  it('lets exactly one of two concurrent runs proceed; the other gets SessionBusyError with retryAfterMs', async () => {
    const store = durableMemoryStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const agent = defineAgent({
      name: 'slow',
      instructions: '',
      tools: {
        wait: tool({
          description: 'waits',
          input: z.object({}),
          handler: async () => {
            started();
            return gate;
          },
        }),
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'wait', input: {} }] }, { text: 'done' }]);
    const first = run(agent, { store, sessionId: 'busy', message: 'go', llm, leaseTtlMs: 5_000 });
    await running; // the first run holds the lease once its handler runs: no timing guess
    const second = run(agent, { store, sessionId: 'busy', message: 'again', llm, leaseTtlMs: 5_000 });
    const error = await second.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionBusyError);
    expect((error as SessionBusyError).retryAfterMs).toBeGreaterThan(0);
    expect((error as SessionBusyError).retryAfterMs).toBeLessThanOrEqual(5_000);
    release();
    expect((await first).status).toBe('complete');
  });

  it('fences a stale lease holder: its append fails with LeaseLostError and writes nothing', async () => {
    const store = durableMemoryStore();
    const init = { agentName: 'a', ownerId: null, tenantId: null, state: null };
    const stale = await store.acquireLease('fence', { holder: 'w1', ttlMs: 20, init });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const fresh = await store.acquireLease('fence', { holder: 'w2', ttlMs: 5_000, init });
    expect(fresh.epoch).toBeGreaterThan(stale.epoch);
    const message = { id: 'm1', role: 'user' as const, content: 'late', createdAt: new Date().toISOString() };
    await expect(
      store.append('fence', {
        expectedSeq: 0,
        messages: [message],
        lease: { holder: 'w1', epoch: stale.epoch },
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.load('fence'))!.messages).toEqual([]);
  });

  it('keeps renewing the lease while a handler runs longer than the TTL', async () => {
    const store = durableMemoryStore();
    let finishHandler = () => {};
    const checked = new Promise<void>((resolve) => {
      finishHandler = resolve;
    });
    const agent = defineAgent({
      name: 'long',
      instructions: '',
      tools: {
        slow: tool({
          description: 'takes a while',
          input: z.object({}),
          safeToRetry: true,
          // Runs until the test has checked the lease: a stalled machine cannot end it early.
          handler: async () => {
            await checked;
            return 'ok';
          },
        }),
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'slow', input: {} }] }, { text: 'done' }]);
    const running = run(agent, { store, sessionId: 'renew', message: 'go', llm, leaseTtlMs: TTL });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Long past the first TTL, the lease is still held, so a second worker is refused.
    await expect(run(agent, { store, sessionId: 'renew', llm, leaseTtlMs: TTL })).rejects.toBeInstanceOf(
      SessionBusyError,
    );
    finishHandler();
    expect((await running).status).toBe('complete');
  });
});

describe('durable mode activation', () => {
  const chat = defineAgent({ name: 'chat', instructions: 'Be brief.' });
  const withTools = triageAgent(sideEffectLedger());

  it.each([
    ['chat-only', chat],
    ['tool-calling', withTools],
  ])('refuses memoryStore() with a sessionId before any model call (%s agent)', async (_, agent) => {
    await expect(
      run(agent, { store: memoryStore(), sessionId: 'x', message: 'hi', llm: unreachableLlm() }),
    ).rejects.toBeInstanceOf(MemoryStoreNotDurableError);
  });

  it('runs statelessly on memoryStore() without a sessionId', async () => {
    const ledger = sideEffectLedger();
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'lookup', input: { customer: 'c' } }] },
      { text: 'done' },
    ]);
    const result = await run(triageAgent(ledger), { store: memoryStore(), message: 'hi', llm });
    expect(result).toMatchObject({ status: 'complete', response: 'done', sessionId: null, headSeq: 4 });
    expect(ledger.calls).toHaveLength(1);
  });

  it('returns a completed session’s stored answer without calling the model', async () => {
    const store = durableMemoryStore();
    const llm = scriptedLlm([{ text: 'Hello there.', usage: { inputTokens: 3, outputTokens: 2 } }]);
    const first = await run(chat, { store, sessionId: 'done', message: 'hi', llm });
    expect(first.usage).toEqual({ inputTokens: 3, outputTokens: 2 });
    const again = await run(chat, { store, sessionId: 'done', llm: unreachableLlm() });
    expect(again).toMatchObject({ status: 'complete', response: 'Hello there.', headSeq: 2 });
    expect((await store.load('done'))!.session.state).toEqual({ usage: { inputTokens: 3, outputTokens: 2 } });
  });

  it('requires a message to start a new session', async () => {
    await expect(
      run(chat, { store: durableMemoryStore(), sessionId: 'new', llm: unreachableLlm() }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'message',
    });
  });
});

describe('ownership', () => {
  it('denies another owner or tenant with the not-found message and never overwrites the stored owner', async () => {
    const store = durableMemoryStore();
    const chat = defineAgent({ name: 'chat', instructions: '' });
    await run(chat, {
      store,
      sessionId: 'mine',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      ownerId: 'u1',
      tenantId: 't1',
    });
    for (const intruder of [
      { ownerId: 'u2', tenantId: 't1' },
      { ownerId: 'u1', tenantId: 't2' },
      { ownerId: null, tenantId: null },
    ]) {
      const error = await run(chat, {
        store,
        sessionId: 'mine',
        message: 'steal',
        llm: unreachableLlm(),
        ...intruder,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionAccessDeniedError);
      expect((error as Error).message).toBe(new SessionNotFoundError({ sessionId: 'mine' }).message);
    }
    const stored = (await store.load('mine'))!;
    expect(stored.session).toMatchObject({ ownerId: 'u1', tenantId: 't1', headSeq: 2 });
    const owner = await run(chat, {
      store,
      sessionId: 'mine',
      message: 'more',
      llm: scriptedLlm([{ text: 'a' }, { text: 'b' }]),
      ownerId: 'u1',
      tenantId: 't1',
    });
    expect(owner.response).toBe('b');
  });
});

describe('waiting for a lease', () => {
  it('waits out a crashed holder’s lease when leaseWaitMs allows, and fails fast by default', async () => {
    const store = durableMemoryStore();
    const init = { agentName: 'chat', ownerId: null, tenantId: null, state: null };
    await store.acquireLease('left-behind', { holder: 'dead-process', ttlMs: 80, init });
    const chat = defineAgent({ name: 'chat', instructions: '' });
    await expect(
      run(chat, { store, sessionId: 'left-behind', message: 'hi', llm: scriptedLlm([{ text: 'a' }]) }),
    ).rejects.toBeInstanceOf(SessionBusyError);
    const result = await run(chat, {
      store,
      sessionId: 'left-behind',
      message: 'hi',
      llm: scriptedLlm([{ text: 'a' }]),
      leaseWaitMs: 2_000,
    });
    expect(result.status).toBe('complete');
  });
});

describe('retrying a run with the same message', () => {
  it('appends a message with a given messageId once, however often the run is retried', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'p', name: 'postSlack', input: { text: 'x' } }] },
      { text: 'Done.' },
    ]);
    const attempt = (s = store) =>
      run(agent, {
        store: s,
        sessionId: 'retry',
        message: 'post it',
        messageId: 'req-1',
        llm,
        leaseTtlMs: TTL,
      });
    // The first delivery dies after write #1; the queue redelivers the same message twice.
    await expect(attempt(crashAfterToolResults(store))).rejects.toSatisfy(isSimulatedCrash);
    await new Promise((resolve) => setTimeout(resolve, TTL + 10));
    expect((await attempt()).status).toBe('complete');
    expect((await attempt()).response).toBe('Done.');
    const stored = (await store.load('retry'))!;
    expect(stored.messages.filter((m) => m.role === 'user').map((m) => m.id)).toEqual(['req-1']);
    expect(ledger.count('p')).toBe(1);
  });
});
