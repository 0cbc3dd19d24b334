import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  defineAgent,
  foldSession,
  type NewMessage,
  run,
  type StoreLimits,
  tool,
} from '../src/index.ts';
import { messageByteLength } from '../src/store/index.ts';
import {
  durableMemoryStore,
  faultyStore,
  isSimulatedCrash,
  scriptedLlm,
  unreachableLlm,
} from '../src/testing/index.ts';

/** A durable memory store with `limits` that records the messages of every append it receives. */
function auditedStore(limits: Partial<StoreLimits>) {
  const store = durableMemoryStore({ limits });
  const appends: NewMessage[][] = [];
  const append: AgentStore['append'] = (sessionId, input) => {
    appends.push(input.messages);
    return store.append(sessionId, input);
  };
  return { store: { ...store, append } as AgentStore, appends };
}

function fanOutAgent(opts: { needsApproval?: boolean; safeToRetry?: boolean; outputBytes?: number } = {}) {
  const ran: string[] = [];
  const agent = defineAgent({
    name: 'fan-out',
    instructions: 'x',
    tools: {
      work: tool({
        description: 'w',
        input: z.object({ i: z.number() }),
        ...(opts.needsApproval ? { needsApproval: true } : {}),
        ...(opts.safeToRetry ? { safeToRetry: true } : {}),
        handler: async ({ i }, ctx) => {
          ran.push(ctx.toolCallId);
          await new Promise((resolve) => setTimeout(resolve, i % 7));
          return { i, pad: 'p'.repeat(opts.outputBytes ?? 0) };
        },
      }),
    },
  });
  return { agent, ran };
}

const script = (n: number) =>
  scriptedLlm([
    { toolCalls: Array.from({ length: n }, (_, i) => ({ name: 'work', input: { i } })) },
    { text: 'done' },
  ]);

function expectWithinLimits(appends: NewMessage[][], limits: Partial<StoreLimits>) {
  for (const batch of appends) {
    expect(batch.length).toBeLessThanOrEqual(limits.maxMessagesPerAppend ?? Number.POSITIVE_INFINITY);
    const bytes = batch.reduce((sum, m) => sum + messageByteLength(m), 0);
    expect(bytes).toBeLessThanOrEqual(limits.maxAppendBytes ?? Number.POSITIVE_INFINITY);
  }
}

async function expectOneResultPerCall(store: AgentStore, sessionId: string, calls: number) {
  const loaded = await store.load(sessionId);
  const folded = foldSession(loaded!.messages);
  expect(folded.toolCalls).toHaveLength(calls);
  for (const { result } of folded.toolCalls) expect(result).not.toBeNull();
  const resultIds = loaded!.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
  expect(new Set(resultIds).size).toBe(resultIds.length);
  return loaded!;
}

describe('commits respect the store limits', () => {
  it('200 parallel calls on a 64-per-append store: every effect once, every result stored, resumable', async () => {
    const limits = { maxMessagesPerAppend: 64 };
    const { store, appends } = auditedStore(limits);
    const { agent, ran } = fanOutAgent();
    const result = await run(agent, { store, sessionId: 'fan', message: 'go', llm: script(200) });
    expect(result.status).toBe('complete');
    expect(ran).toHaveLength(200);
    expect(new Set(ran).size).toBe(200);
    expectWithinLimits(appends, limits);
    const loaded = await expectOneResultPerCall(store, 'fan', 200);
    // Results settle out of order across several appends; the run reports them as stored.
    expect(result.messages).toEqual(loaded.messages);
    const again = await run(agent, { store, sessionId: 'fan', llm: unreachableLlm() });
    expect(again.status).toBe('complete');
  });

  it('an acknowledgement lost on any split result append is re-read, never appended twice', async () => {
    for (const call of [2, 3, 4]) {
      const limits = { maxMessagesPerAppend: 64 };
      const { store, appends } = auditedStore(limits);
      const lossy = faultyStore(store, { op: 'append', call, when: 'after', effect: 'ack-lost' });
      const { agent, ran } = fanOutAgent();
      const id = `ack-${call}`;
      const result = await run(agent, { store: lossy, sessionId: id, message: 'go', llm: script(150) });
      expect(result.status).toBe('complete');
      expect(lossy.tripped).toBe(true);
      expect(ran).toHaveLength(150);
      expectWithinLimits(appends, limits);
      const loaded = await expectOneResultPerCall(store, id, 150);
      expect(loaded.messages.map((m) => m.seq)).toEqual(loaded.messages.map((_, i) => i + 1));
      expect(result.messages).toEqual(loaded.messages);
    }
  });

  it('a byte-heavy fan-out is split by maxAppendBytes, never refused by the store', async () => {
    const limits = { maxMessageBytes: 4000, maxMessagesPerAppend: 50, maxAppendBytes: 5000 };
    const { store, appends } = auditedStore(limits);
    const { agent, ran } = fanOutAgent({ outputBytes: 1500 });
    const result = await run(agent, { store, sessionId: 'bytes', message: 'go', llm: script(7) });
    expect(result.status).toBe('complete');
    expect(ran).toHaveLength(7);
    expectWithinLimits(appends, limits);
    const loaded = await expectOneResultPerCall(store, 'bytes', 7);
    expect(loaded.messages.filter((m) => m.kind === 'tool-output-error')).toEqual([]);
  });

  it('a user message and an answer that do not fit one append together are split, user first', async () => {
    const limits = { maxMessageBytes: 4000, maxMessagesPerAppend: 50, maxAppendBytes: 5000 };
    const { store, appends } = auditedStore(limits);
    const agent = defineAgent({ name: 'talker', instructions: 'x' });
    const llm = scriptedLlm([{ text: 'a'.repeat(3000) }]);
    const result = await run(agent, { store, sessionId: 'split-answer', message: 'q'.repeat(3000), llm });
    expect(result.status).toBe('complete');
    expect(appends.map((batch) => batch.map((m) => m.role))).toEqual([['user'], ['assistant']]);
    expectWithinLimits(appends, limits);
    expect((await store.load('split-answer'))?.session.lease).toBeNull();
  });

  it('100 interrupted calls resume into 100 durability errors split across appends', async () => {
    const limits = { maxMessagesPerAppend: 64 };
    const { store, appends } = auditedStore(limits);
    const { agent, ran } = fanOutAgent();
    // Append #2 is the first batch of results: the process dies before it.
    const crashing = faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' });
    const failed = await run(agent, {
      store: crashing,
      sessionId: 'dur',
      message: 'go',
      llm: script(100),
      leaseTtlMs: 300,
    }).catch((e: unknown) => e);
    expect(isSimulatedCrash(failed)).toBe(true);
    const effects = ran.length;
    const resumed = await run(agent, { store, sessionId: 'dur', llm: script(100), leaseWaitMs: 5000 });
    expect(resumed.status).toBe('complete');
    expect(ran).toHaveLength(effects);
    expectWithinLimits(appends, limits);
    const loaded = await expectOneResultPerCall(store, 'dur', 100);
    const errors = loaded.messages.filter((m) => m.kind === 'tool-durability-error');
    expect(errors).toHaveLength(100);
    expect(errors.every((m) => m.origin?.via === 'durability-error')).toBe(true);
  });

  it('100 rejections on a 2-per-append store: each decision lands with its result; no handler runs', async () => {
    const limits = { maxMessagesPerAppend: 2 };
    const { store, appends } = auditedStore(limits);
    const { agent, ran } = fanOutAgent({ needsApproval: true, safeToRetry: true });
    const waiting = await run(agent, { store, sessionId: 'rej', message: 'go', llm: script(100) });
    expect(waiting.status).toBe('awaiting-approval');
    expect(waiting.pendingApprovals).toHaveLength(100);
    const approvals = Object.fromEntries(
      waiting.pendingApprovals.map((p) => [p.toolCallId, { approve: false as const }]),
    );
    const done = await run(agent, { store, sessionId: 'rej', llm: script(100), approvals });
    expect(done.status).toBe('complete');
    expect(ran).toEqual([]);
    expectWithinLimits(appends, limits);
    const loaded = await expectOneResultPerCall(store, 'rej', 100);
    expect(loaded.messages.filter((m) => m.origin?.via === 'rejected')).toHaveLength(100);
    // Every rejection result shares its append with its decision.
    for (const batch of appends) {
      const rejected = batch.filter((m) => m.kind === 'tool-approval-rejected');
      for (const r of rejected) {
        expect(
          batch.some(
            (m) => m.kind === 'approval-decided' && m.content.includes(JSON.stringify(r.toolCallId)),
          ),
        ).toBe(true);
      }
    }
  });

  it('write #1 split on a 2-per-append store: a crash between its appends never lets an unapproved call run', async () => {
    const limits = { maxMessagesPerAppend: 2 };
    for (const call of [1, 2]) {
      const { store, appends } = auditedStore(limits);
      const { agent, ran } = fanOutAgent({ needsApproval: true, safeToRetry: true });
      const crashing = faultyStore(store, { op: 'append', call, when: 'after', effect: 'crash' });
      const id = `split-${call}`;
      await run(agent, {
        store: crashing,
        sessionId: id,
        message: 'go',
        llm: script(3),
        leaseTtlMs: 300,
      }).catch((e: unknown) => {
        if (!isSimulatedCrash(e)) throw e;
      });
      // After append 1 only [user, approval request] landed: the model is asked again. After
      // append 2 write #1 is whole: the calls wait for decisions.
      const resumed = await run(agent, { store, sessionId: id, llm: script(3), leaseWaitMs: 5000 }).catch(
        (e: unknown) => e,
      );
      if (call === 1) expect(resumed).toMatchObject({ status: 'awaiting-approval' });
      else expect(resumed).toMatchObject({ code: 'APPROVAL_REQUIRED' });
      expect(ran).toEqual([]);
      expectWithinLimits(appends, limits);
      const folded = foldSession((await store.load(id))!.messages);
      expect(folded.interruptedCalls).toEqual([]);
      expect(folded.awaitingApproval).toHaveLength(3);
    }
  });
});
