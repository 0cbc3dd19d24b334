import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  defineAgent,
  isAgentStoreError,
  type LlmAdapter,
  type LlmResponse,
  run,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, faultyStore, isSimulatedCrash } from '../src/testing/index.ts';

/*
 * Attack on the split write #1 (run.ts `firstWrite`): on a store that cannot take user message,
 * assistant message and approval request in one append, the request is written first "so a crash
 * between appends leaves requests for calls nobody made (inert)". They are not inert when the
 * provider reuses call ids across turns (`call_0` every turn, which tool-call-ids.ts itself
 * names): `assignToolCallIds` only avoids ids of earlier *calls*, not ids named by an orphan
 * request. The retried step's call `call_0` — now a tool that needs no approval — is then taken
 * for one awaiting approval (session-fold.ts: requested.has(call.id)) after it was interrupted,
 * and approving it runs a non-retryable handler a second time.
 */

async function freeLease(store: AgentStore, sessionId: string) {
  // What lease expiry would do, without waiting for a clock: the crashed holder's lease goes.
  const lease = (await store.load(sessionId))!.session.lease;
  if (lease) await store.releaseLease(sessionId, { holder: lease.holder, epoch: lease.epoch });
}

describe('an orphan approval request from a split write #1', () => {
  it('a reused provider call id is never taken for a call awaiting approval; no handler runs twice', async () => {
    const store = durableMemoryStore({ limits: { maxMessagesPerAppend: 2 } });
    const ran = { wire: 0, read: 0 };
    const agent = defineAgent({
      name: 'attack',
      instructions: 'x',
      tools: {
        wire: tool({
          description: 'needs approval',
          input: z.object({}),
          needsApproval: true,
          handler: () => ++ran.wire,
        }),
        read: tool({
          description: 'no approval, not retryable',
          input: z.object({}),
          handler: () => ++ran.read,
        }),
      },
    });
    // The model answers differently each time it is asked (as real models do), reusing call_0.
    const answers: Partial<LlmResponse>[] = [
      { toolCalls: [{ id: 'call_0', name: 'wire', input: {} }] },
      { toolCalls: [{ id: 'call_0', name: 'read', input: {} }] },
      { text: 'done' },
      { text: 'done' },
    ];
    let asked = 0;
    const llm: LlmAdapter = {
      async generate() {
        const a = answers[asked++]!;
        return { text: a.text ?? '', toolCalls: a.toolCalls ?? [] };
      },
    };
    const crash = (e: unknown) => {
      if (!isSimulatedCrash(e)) throw e;
    };

    // 1: write #1 is split; only [user, approval request for call_0] lands, then the process dies.
    await run(agent, {
      store: faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' }),
      sessionId: 's',
      message: 'go',
      llm,
    }).catch(crash);
    await freeLease(store, 's');

    // 2: the step is retried; the model now calls `read` as call_0; it runs, then the process dies
    // before its result is committed.
    await run(agent, {
      store: faultyStore(store, { op: 'append', call: 2, when: 'before', effect: 'crash' }),
      sessionId: 's',
      llm,
    }).catch(crash);
    await freeLease(store, 's');
    expect(ran.read, 'read ran in the retried step').toBe(1);

    // 3: resume. call_0 (read) was interrupted: it must get a durability error, not wait for a
    // human. If it is presented for approval anyway, approving it must not run it again.
    const resumed = await run(agent, { store, sessionId: 's', llm }).catch((e: unknown) => e);
    const presented = isAgentStoreError(resumed, 'APPROVAL_REQUIRED') ? resumed.toolCallIds : [];
    if (presented.length) {
      const approvals = Object.fromEntries(presented.map((id) => [id, { approve: true as const }]));
      await run(agent, { store, sessionId: 's', llm, approvals });
    }
    expect(ran.read, 'times the non-retryable read handler ran').toBe(1);
    expect(presented, 'interrupted calls of a no-approval tool presented for approval').toEqual([]);
    expect(ran.wire).toBe(0);
  });
});
