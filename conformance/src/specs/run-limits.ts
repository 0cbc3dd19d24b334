import { type AgentStore, defineAgent, foldSession, type NewMessage, run, tool } from '@agentstore/core';
import { scriptedLlm, unreachableLlm } from '@agentstore/core/testing';
import { assert, assertContiguous, assertEqual, preview } from '../assertions.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, jsonInput } from '../fixtures.ts';

/** Counts every append the store receives and checks it against the declared limits. */
function auditing(store: AgentStore) {
  const appends: NewMessage[][] = [];
  const audited: AgentStore = {
    ...store,
    durable: store.durable,
    limits: store.limits,
    load: (...args) => store.load(...args),
    append: (sessionId, input) => {
      appends.push(input.messages);
      return store.append(sessionId, input);
    },
    acquireLease: (...args) => store.acquireLease(...args),
    renewLease: (...args) => store.renewLease(...args),
    releaseLease: (...args) => store.releaseLease(...args),
    listSessions: (...args) => store.listSessions(...args),
    deleteSession: (...args) => store.deleteSession(...args),
    close: () => store.close(),
  };
  return { store: audited, appends };
}

/** An agent whose one step fans out `calls` parallel calls, each returning `outputBytes` of text. */
function fanOut(calls: number, options: { needsApproval?: boolean; outputBytes?: number } = {}) {
  const effects = new Map<string, number>();
  const agent = defineAgent({
    name: 'conformance-fan-out',
    instructions: 'Do everything at once.',
    tools: {
      work: tool({
        description: 'One unit of work with a side effect.',
        input: jsonInput,
        ...(options.needsApproval ? { needsApproval: true, safeToRetry: true } : {}),
        handler: (_input, ctx) => {
          effects.set(ctx.toolCallId, (effects.get(ctx.toolCallId) ?? 0) + 1);
          return { done: true, pad: 'p'.repeat(options.outputBytes ?? 0) };
        },
      }),
    },
  });
  const llm = scriptedLlm([
    { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'work', input: { i } })) },
    { text: 'All done.' },
  ]);
  return { agent, llm, effects };
}

/** Every append `run()` sent fit the declared limits; every call has exactly one result. */
async function assertSettled(
  ctx: CheckContext,
  id: string,
  appends: NewMessage[][],
  calls: number,
  what: string,
) {
  const { maxMessagesPerAppend, maxMessageBytes, maxAppendBytes } = ctx.store.limits;
  for (const [i, batch] of appends.entries()) {
    assert(
      batch.length <= maxMessagesPerAppend,
      `${what}: append #${i + 1} carried ${batch.length} messages; the store declares maxMessagesPerAppend ${maxMessagesPerAppend}`,
    );
    const bytes = batch.reduce((sum, m) => sum + new TextEncoder().encode(JSON.stringify(m)).length, 0);
    assert(
      maxAppendBytes === undefined || bytes <= maxAppendBytes,
      `${what}: append #${i + 1} carried ${bytes} bytes; the store declares maxAppendBytes ${maxAppendBytes}`,
    );
    for (const m of batch) {
      assert(
        new TextEncoder().encode(JSON.stringify(m)).length <= maxMessageBytes,
        `${what}: message ${preview(m.id)} is over maxMessageBytes`,
      );
    }
  }
  const loaded = await assertContiguous(ctx, id, what);
  const folded = foldSession(loaded.messages);
  assertEqual(folded.toolCalls.length, calls, `${what}: tool calls stored`);
  const open = folded.toolCalls.filter((t) => t.result === null).map((t) => t.call.id);
  assertEqual(open, [], `${what}: calls left without a result`);
  const results = loaded.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
  assertEqual(new Set(results).size, results.length, `${what}: one result per call`);
  return loaded;
}

const runLimitChecks: ConformanceCheck[] = [
  {
    name: 'run(): 200 parallel calls commit within the declared limits, each effect once, and the session resumes',
    requires: ['durable'],
    timeoutMs: 180_000,
    async run(ctx) {
      const id = freshId('fan-out');
      const { store, appends } = auditing(ctx.store);
      const { agent, llm, effects } = fanOut(200);
      const result = await run(agent, { store, sessionId: id, message: 'Go.', llm });
      assertEqual(result.status, 'complete', 'status of the fan-out run');
      assertEqual(
        [...effects.values()].filter((n) => n !== 1),
        [],
        'handlers that ran other than once',
      );
      assertEqual(effects.size, 200, 'handlers run');
      await assertSettled(ctx, id, appends, 200, '200 parallel calls');
      const again = await run(agent, { store, sessionId: id, llm: unreachableLlm() });
      assertEqual(again.status, 'complete', 'resuming the completed session');
    },
  },
  {
    name: 'run(): 100 approval rejections commit within the declared limits; no rejected handler runs',
    requires: ['durable'],
    timeoutMs: 180_000,
    async run(ctx) {
      const id = freshId('rejections');
      const { store, appends } = auditing(ctx.store);
      const { agent, llm, effects } = fanOut(100, { needsApproval: true });
      const waiting = await run(agent, { store, sessionId: id, message: 'Go.', llm });
      assertEqual(
        [waiting.status, waiting.pendingApprovals.length],
        ['awaiting-approval', 100],
        'the run that asks',
      );
      const approvals = Object.fromEntries(
        waiting.pendingApprovals.map((p) => [p.toolCallId, { approve: false as const, reason: 'no' }]),
      );
      const done = await run(agent, { store, sessionId: id, llm, approvals });
      assertEqual(done.status, 'complete', 'status after 100 rejections');
      assertEqual(effects.size, 0, 'handlers run for rejected calls');
      await assertSettled(ctx, id, appends, 100, '100 rejections');
    },
  },
  {
    name: 'run(): a byte-heavy fan-out is split to fit the per-append byte budget; no result is refused',
    requires: ['durable'],
    timeoutMs: 300_000,
    async run(ctx) {
      const { maxMessageBytes, maxAppendBytes } = ctx.store.limits;
      // Each result near the largest the store takes (capped at 1 MiB to stay cheap), enough of
      // them to need at least three appends by bytes when the store declares a budget.
      const perResult = Math.floor(
        Math.min(maxMessageBytes, maxAppendBytes ?? Number.POSITIVE_INFINITY, 1024 * 1024) * 0.8,
      );
      const calls =
        maxAppendBytes === undefined ? 7 : Math.max(7, Math.ceil((2.5 * maxAppendBytes) / perResult));
      const id = freshId('byte-heavy');
      const { store, appends } = auditing(ctx.store);
      const { agent, llm, effects } = fanOut(calls, { outputBytes: perResult - 400 });
      const result = await run(agent, { store, sessionId: id, message: 'Go.', llm });
      assertEqual(result.status, 'complete', 'status of the byte-heavy run');
      assertEqual(effects.size, calls, 'handlers run');
      assertEqual(
        [...effects.values()].filter((n) => n !== 1),
        [],
        'handlers that ran other than once',
      );
      const loaded = await assertSettled(ctx, id, appends, calls, 'byte-heavy fan-out');
      const refused = loaded.messages.filter((m) => m.kind === 'tool-output-error').length;
      assertEqual(refused, 0, 'results replaced by an output error although they fit maxMessageBytes');
    },
  },
  {
    name: 'run(): a session re-created under a deleted session’s id gives the same provider call id a different idempotency key',
    requires: ['durable'],
    timeoutMs: 60_000,
    async run(ctx) {
      const id = freshId('incarnation');
      const keys: string[] = [];
      const agent = defineAgent({
        name: 'conformance-charge',
        instructions: 'Charge once.',
        tools: {
          charge: tool({
            description: 'A side effect a downstream service deduplicates by key.',
            input: jsonInput,
            handler: (_input, toolCtx) => {
              keys.push(toolCtx.idempotencyKey);
              return { charged: true };
            },
          }),
        },
      });
      // Providers number calls per response (`call_0`, …): the same id comes back in a new session.
      const llm = () =>
        scriptedLlm([{ toolCalls: [{ id: 'call_0', name: 'charge', input: {} }] }, { text: 'Done.' }]);
      const first = await run(agent, { store: ctx.store, sessionId: id, message: 'Charge 5.', llm: llm() });
      assertEqual(first.status, 'complete', 'status of the first incarnation’s run');
      assertEqual(
        (await ctx.store.deleteSession(id)).deleted,
        true,
        'deleteSession of the first incarnation',
      );
      const second = await run(agent, {
        store: ctx.store,
        sessionId: id,
        message: 'Charge 999.',
        llm: llm(),
      });
      assertEqual(second.status, 'complete', 'status of the second incarnation’s run');
      assertEqual(keys.length, 2, 'handler runs (one per incarnation)');
      assert(
        keys[0] !== keys[1],
        `both incarnations of ${preview(id)} handed call_0 the idempotency key ${keys[0]}: a downstream service would return the deleted session's effect as the new call's; record an incarnationId when the session is created (see SessionRecord.incarnationId)`,
      );
      const stored = (await ctx.store.load(id))!.session;
      assert(typeof stored.incarnationId === 'string', 'the re-created session has no incarnationId');
    },
  },
];

export const runLimitSpec: ConformanceSpec = {
  title: 'run() within the store limits',
  checks: runLimitChecks,
};
