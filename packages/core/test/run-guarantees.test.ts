// Regressions for the findings of the independent review of the run loop.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  defineAgent,
  InvalidArgumentError,
  idempotencyKeyFor,
  LeaseLostError,
  run,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, faultyStore, isSimulatedCrash, scriptedLlm } from '../src/testing/index.ts';
import { resumeUntilComplete, sideEffectLedger, triageAgent } from './fixtures.ts';

const charges: { key: string; cents: number }[] = [];
const billing = defineAgent({
  name: 'billing',
  instructions: '',
  tools: {
    charge: tool({
      description: 'charges',
      input: z.object({ cents: z.number() }),
      handler: async ({ cents }, ctx) => {
        charges.push({ key: ctx.idempotencyKey, cents });
        return { cents };
      },
    }),
  },
});

describe('tool call ids and idempotency keys', () => {
  it('never shares a key between calls of different sessions, runs or turns', async () => {
    charges.length = 0;
    const step = { toolCalls: [{ name: 'charge', input: { cents: 1 } }] };
    await run(billing, { message: 'a', llm: scriptedLlm([step, { text: 'ok' }]) });
    await run(billing, { message: 'b', llm: scriptedLlm([step, { text: 'ok' }]) });
    // A provider that numbers calls per turn: `call_0` every time.
    const store = durableMemoryStore();
    const repeat = { toolCalls: [{ id: 'call_0', name: 'charge', input: { cents: 2 } }] };
    await run(billing, {
      store,
      sessionId: 's',
      message: 'c',
      llm: scriptedLlm([repeat, repeat, { text: 'ok' }]),
    });
    expect(new Set(charges.map((c) => c.key)).size).toBe(charges.length);
    expect(charges).toHaveLength(4);
  });

  it('renames a provider id already used in the session, so a crash in a later step is still resolved', async () => {
    const store = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = triageAgent(ledger);
    const again = { toolCalls: [{ id: 'call_0', name: 'postSlack', input: { text: 'x' } }] };
    const llm = scriptedLlm([again, again, { text: 'done' }]);
    const crashing = faultyStore(store, { op: 'append', call: 4, when: 'before', effect: 'crash' });
    await expect(
      run(agent, { store: crashing, sessionId: 'dup', message: 'go', llm, leaseTtlMs: 300 }),
    ).rejects.toSatisfy(isSimulatedCrash);
    const result = await resumeUntilComplete(agent, { store, sessionId: 'dup', llm, leaseTtlMs: 300 });
    expect(result.status).toBe('complete');
    const calls = result.messages.flatMap((m) => m.toolCalls ?? []);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    const results = result.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.toolCallId).sort()).toEqual(calls.map((c) => c.id).sort());
    expect(results[1]!.kind).toBe('tool-durability-error');
    expect(ledger.calls).toHaveLength(2);
  });
});

describe('a result over the store limit', () => {
  it('is replaced by an error result and does not sink its neighbours', async () => {
    const store = durableMemoryStore({ limits: { maxMessageBytes: 2_000 } });
    const posted: string[] = [];
    const agent = defineAgent({
      name: 'big',
      instructions: '',
      tools: {
        huge: tool({
          description: 'huge',
          input: z.object({}),
          safeToRetry: true,
          handler: () => 'x'.repeat(10_000),
        }),
        post: tool({
          description: 'post',
          input: z.object({}),
          handler: () => {
            posted.push('once');
            return 'posted';
          },
        }),
      },
    });
    const result = await run(agent, {
      store,
      sessionId: 'big',
      message: 'go',
      llm: scriptedLlm([
        {
          toolCalls: [
            { id: 'h', name: 'huge', input: {} },
            { id: 'p', name: 'post', input: {} },
          ],
        },
        { text: 'done' },
      ]),
    });
    expect(result.status).toBe('complete');
    const byCall = Object.fromEntries(
      result.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]),
    );
    expect(byCall.h!.kind).toBe('tool-output-error');
    expect(JSON.parse(byCall.h!.content).error).toMatch(/over the store's limit of 2000/);
    expect(byCall.p!.content).toBe('"posted"');
    expect(posted).toEqual(['once']);
  });
});

describe('cancellation by the caller', () => {
  it('commits a handler that finished after the abort, and never starts one after it', async () => {
    const store = durableMemoryStore();
    const controller = new AbortController();
    const started: string[] = [];
    const agent = defineAgent({
      name: 'cancel',
      instructions: '',
      tools: {
        send: tool({
          description: 'sends, then the client goes away',
          input: z.object({}),
          handler: async () => {
            started.push('send');
            controller.abort(new Error('client went away'));
            return 'sent';
          },
        }),
        later: tool({
          description: 'a later step',
          input: z.object({}),
          handler: () => {
            started.push('later');
            return null;
          },
        }),
      },
    });
    const llm = scriptedLlm([
      { toolCalls: [{ id: 's', name: 'send', input: {} }] },
      { toolCalls: [{ id: 'l', name: 'later', input: {} }] },
      { text: 'done' },
    ]);
    await expect(
      run(agent, { store, sessionId: 'c', message: 'go', llm, signal: controller.signal }),
    ).rejects.toThrow('client went away');
    const stored = (await store.load('c'))!;
    expect(stored.messages.find((m) => m.toolCallId === 's')?.content).toBe('"sent"');
    expect(stored.session.lease).toBeNull();
    expect((await run(agent, { store, sessionId: 'c', llm })).status).toBe('complete');
    expect(started).toEqual(['send', 'later']);
  });
});

describe('approvals retried after a crash', () => {
  const refunds: string[] = [];
  const agent = defineAgent({
    name: 'refunds',
    instructions: '',
    tools: {
      refund: tool({
        description: 'refund',
        input: z.object({}),
        needsApproval: true,
        handler: (_input, ctx) => {
          refunds.push(ctx.toolCallId);
          return 'refunded';
        },
      }),
    },
  });
  const llm = () => scriptedLlm([{ toolCalls: [{ id: 'r', name: 'refund', input: {} }] }, { text: 'done' }]);

  it('accepts the same decision again (a redelivered request) and refuses a different one', async () => {
    refunds.length = 0;
    const store = durableMemoryStore();
    await run(agent, { store, sessionId: 'a', message: 'go', llm: llm() });
    // The decision commits, then the process dies before the handler's result.
    const crashing = faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' });
    await expect(
      run(agent, {
        store: crashing,
        sessionId: 'a',
        llm: llm(),
        approvals: { r: { approve: true } },
        leaseTtlMs: 300,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    // The crashed holder's lease is waited out, not slept past.
    const retried = await run(agent, {
      store,
      sessionId: 'a',
      llm: llm(),
      approvals: { r: { approve: true } },
      leaseWaitMs: 5_000,
    });
    expect(retried.status).toBe('complete');
    expect(refunds).toEqual(['r']);
    await expect(
      run(agent, { store, sessionId: 'a', llm: llm(), approvals: { r: { approve: false } } }),
    ).rejects.toMatchObject({ code: 'INVALID_APPROVAL', reason: 'already-decided' });
  });

  it('refuses a decision that is not a boolean, or for an inherited property name, writing nothing', async () => {
    const store = durableMemoryStore();
    await run(agent, { store, sessionId: 'b', message: 'go', llm: llm() });
    const head = (await store.load('b'))!.session.headSeq;
    await expect(
      run(agent, { store, sessionId: 'b', llm: llm(), approvals: { r: { approve: 'yes' } as never } }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'approvals["r"].approve' });
    await expect(run(agent, { store, sessionId: 'b', llm: llm(), approvals: {} })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    expect((await store.load('b'))!.session.headSeq).toBe(head);
  });
});

describe('leases and release', () => {
  it('reports a failed release after a committed run instead of failing it', async () => {
    const store = durableMemoryStore();
    const faulty = faultyStore(store, { op: 'releaseLease', call: 1, when: 'before', effect: 'ack-lost' });
    const agent = defineAgent({ name: 'approve', instructions: '', tools: billing.tools });
    const paused = await run(
      defineAgent({ ...agent, tools: { charge: tool({ ...billing.tools.charge!, needsApproval: true }) } }),
      {
        store: faulty,
        sessionId: 'rel',
        message: 'go',
        llm: scriptedLlm([{ toolCalls: [{ id: 'c', name: 'charge', input: { cents: 1 } }] }]),
      },
    );
    expect(paused.status).toBe('awaiting-approval');
    expect(paused.leaseReleaseError).toBeInstanceOf(Error);
  });

  it('aborts the run with LeaseLostError when renewals hang past the lease', async () => {
    const store = durableMemoryStore();
    const hanging: AgentStore = { ...store, renewLease: () => new Promise(() => {}) };
    let sawAbort = false;
    const agent = defineAgent({
      name: 'slow',
      instructions: '',
      tools: {
        wait: tool({
          description: 'waits',
          input: z.object({}),
          safeToRetry: true,
          handler: (_input, ctx) =>
            new Promise((_, reject) =>
              ctx.signal.addEventListener('abort', () => {
                sawAbort = true;
                reject(ctx.signal.reason);
              }),
            ),
        }),
      },
    });
    const error = await run(agent, {
      store: hanging,
      sessionId: 'hang',
      message: 'go',
      leaseTtlMs: 300,
      llm: scriptedLlm([{ toolCalls: [{ name: 'wait', input: {} }] }, { text: 'done' }]),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(sawAbort).toBe(true);
  });

  it('stops waiting for a busy lease when the caller aborts', async () => {
    const store = durableMemoryStore();
    await store.acquireLease('busy', {
      holder: 'other',
      ttlMs: 5_000,
      init: { agentName: 'billing', ownerId: null, tenantId: null, state: null },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('gave up')), 20);
    await expect(
      run(billing, {
        store,
        sessionId: 'busy',
        message: 'go',
        llm: scriptedLlm([]),
        leaseWaitMs: 4_000,
        signal: controller.signal,
      }),
    ).rejects.toThrow('gave up');
  });
});

describe('resuming after a deploy', () => {
  it('records a durability error when an interrupted call’s tool is gone or its input no longer validates', async () => {
    const store = durableMemoryStore();
    const sent: string[] = [];
    const v1 = defineAgent({
      name: 'mail',
      instructions: '',
      tools: {
        sendMail: tool({
          description: 'mail',
          input: z.object({ to: z.string() }),
          handler: ({ to }) => sent.push(to),
        }),
      },
    });
    const llm = scriptedLlm([
      { toolCalls: [{ id: 'm', name: 'sendMail', input: { to: 'a' } }] },
      { text: 'done' },
    ]);
    await expect(
      run(v1, {
        store: faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' }),
        sessionId: 'd',
        message: 'go',
        llm,
        leaseTtlMs: 300,
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    const v2 = defineAgent({
      ...v1,
      tools: {
        sendMail: tool({ ...v1.tools.sendMail!, input: z.object({ to: z.email() }), safeToRetry: true }),
      },
    });
    const result = await resumeUntilComplete(v2, { store, sessionId: 'd', llm, leaseTtlMs: 300 });
    expect(result.messages.find((m) => m.toolCallId === 'm')?.kind).toBe('tool-durability-error');
    expect(sent).toEqual(['a']);
  });
});

describe('misuse is refused up front', () => {
  it('a sessionId without a store, an approval in a stateless run, a negative afterSeq', async () => {
    await expect(
      run(billing, { sessionId: 's', message: 'go', llm: scriptedLlm([]) }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    const needs = defineAgent({
      name: 'n',
      instructions: '',
      tools: { t: tool({ description: 't', input: z.object({}), needsApproval: true, handler: () => 1 }) },
    });
    await expect(
      run(needs, { message: 'go', llm: scriptedLlm([{ toolCalls: [{ name: 't', input: {} }] }]) }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'sessionId' });
    await expect(durableMemoryStore().load('s', { afterSeq: -1 })).rejects.toMatchObject({
      argument: 'afterSeq',
    });
    expect(await idempotencyKeyFor(null, 'x')).not.toBe(await idempotencyKeyFor('s', 'x'));
  });
});
