import { type AgentStore, defineAgent, type RunResult, run, tool } from '@agentstore/core';
import { type FaultPlan, faultyStore, type ScriptStep, scriptedLlm } from '@agentstore/core/testing';
import { assert, assertContiguous, assertEqual, preview, violation } from '../assertions.ts';
import type { CheckContext, ConformanceCheck, ConformanceSpec } from '../check.ts';
import { freshId, jsonInput, sleep } from '../fixtures.ts';

/**
 * The lease a crashed run leaves behind: short, so resumes wait little, yet long enough that the
 * run cannot reach its local lease deadline (4/5 of it) before the crash on a slow backend.
 */
const CRASHED_RUN_TTL_MS = 600;
/** Runs that must complete: a loaded machine must not be able to outrun their lease. */
const RUN_TTL_MS = 10_000;
const FINAL_ANSWER = 'Charged 42 and emailed the receipt.';
const USER_MESSAGE = 'Charge order 42 and tell the customer.';

/** What the outside world saw: every side effect, keyed by tool call, with the idempotency keys used. */
interface Ledger {
  effects: Map<string, { tool: string; count: number; keys: Set<string> }>;
  lookups: number;
}

function record(ledger: Ledger, toolName: string, callId: string, key: string) {
  const entry = ledger.effects.get(callId) ?? { tool: toolName, count: 0, keys: new Set<string>() };
  entry.count += 1;
  entry.keys.add(key);
  ledger.effects.set(callId, entry);
}

/**
 * A three-step agent: parallel tools (a side effect that must not repeat and a lookup that may),
 * a serial step whose tool reconciles against the ledger, then a final answer.
 */
function scenario() {
  const ledger: Ledger = { effects: new Map(), lookups: 0 };
  const sendEmail = tool({
    description: 'Sends an email. Not safe to retry, no way to ask whether it went out.',
    input: jsonInput,
    handler: (input, ctx) => {
      record(ledger, 'send_email', ctx.toolCallId, ctx.idempotencyKey);
      return { sent: true, to: input.to ?? null };
    },
  });
  const lookup = tool({
    description: 'Reads an order. No side effect.',
    input: jsonInput,
    safeToRetry: true,
    handler: (input) => {
      ledger.lookups += 1;
      return { order: input.order ?? null, total: 42 };
    },
  });
  const charge = tool({
    description: 'Charges a card; the payment API can tell whether a charge with this key exists.',
    input: jsonInput,
    handler: (input, ctx) => {
      record(ledger, 'charge', ctx.toolCallId, ctx.idempotencyKey);
      return { charged: input.amount ?? null, key: ctx.idempotencyKey };
    },
    reconcile: (input, ctx) => {
      const done = ledger.effects.get(ctx.toolCallId);
      return done?.keys.has(ctx.idempotencyKey)
        ? { happened: true, output: { charged: input.amount ?? null, key: ctx.idempotencyKey } }
        : { happened: false };
    },
  });
  const steps: ScriptStep[] = [
    {
      text: 'Looking up the order and notifying the customer.',
      // No provider ids: the loop must assign ids that survive a crash.
      toolCalls: [
        { name: 'send_email', input: { to: 'customer@example.com', subject: 'We got your order' } },
        { name: 'lookup', input: { order: 42 } },
      ],
    },
    { text: 'Charging.', toolCalls: [{ id: 'call_charge_42', name: 'charge', input: { amount: 42 } }] },
    { text: FINAL_ANSWER },
  ];
  const agent = defineAgent({
    name: 'conformance-crash-agent',
    instructions: 'Charge and notify.',
    tools: { send_email: sendEmail, lookup, charge },
  });
  return { ledger, agent, llm: scriptedLlm(steps) };
}

type Scenario = ReturnType<typeof scenario>;

interface Case {
  sessionId: string;
  ownerId: string;
  tenantId: string;
}

const newCase = (label: string): Case => ({
  sessionId: freshId(`crash-${label}`),
  ownerId: `owner-${crypto.randomUUID()}`,
  tenantId: `tenant-${crypto.randomUUID()}`,
});

function runOnce(
  s: Scenario,
  store: AgentStore,
  c: Case,
  message: string | undefined,
  leaseTtlMs = RUN_TTL_MS,
  backgroundErrors?: unknown[],
): Promise<RunResult> {
  return run(s.agent, {
    store,
    sessionId: c.sessionId,
    llm: s.llm,
    ownerId: c.ownerId,
    tenantId: c.tenantId,
    leaseTtlMs,
    ...(message !== undefined ? { message } : {}),
    ...(backgroundErrors ? { onBackgroundError: (error: unknown) => backgroundErrors.push(error) } : {}),
  });
}

/** What a worker does after a crash: run again (re-sending the message only if none landed), waiting out a dead run's lease. */
async function resume(s: Scenario, store: AgentStore, c: Case): Promise<RunResult> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const stored = await store.load(c.sessionId);
    const message = stored && stored.messages.length > 0 ? undefined : USER_MESSAGE;
    try {
      return await runOnce(s, store, c, message);
    } catch (error) {
      const busy = error as { code?: unknown; retryAfterMs?: unknown };
      if (busy?.code !== 'SESSION_BUSY') throw error;
      await sleep(Math.max(1, Number(busy.retryAfterMs)) + 5);
    }
  }
  return violation(`${preview(c.sessionId)}: the session stayed busy through 40 resume attempts`);
}

/** True when `error`, or anything in its cause chain, is the simulated crash. */
function isSimulatedCrash(error: unknown, depth = 0): boolean {
  if (depth > 5 || error === null || typeof error !== 'object') return false;
  if (Array.isArray(error)) return error.some((e) => isSimulatedCrash(e, depth + 1));
  if ((error as { code?: unknown }).code === 'SIMULATED_CRASH') return true;
  return isSimulatedCrash((error as { cause?: unknown }).cause, depth + 1);
}

const describeError = (error: unknown) =>
  error instanceof Error
    ? `${error.name}: ${error.message}${error.cause ? ` (cause: ${preview(String(error.cause))})` : ''}`
    : preview(error);

/** The durability promise, checked after every scenario. */
async function checkInvariants(ctx: CheckContext, s: Scenario, c: Case, result: RunResult, what: string) {
  assertEqual(
    [result.status, result.response],
    ['complete', FINAL_ANSWER],
    `${what}: final status and answer`,
  );
  const loaded = await assertContiguous(ctx, c.sessionId, what);
  const stored = loaded.messages;
  assertEqual(result.headSeq, loaded.session.headSeq, `${what}: headSeq reported by run() vs stored`);
  assertEqual(
    stored.map((m) => m.role).filter((role) => role !== 'tool'),
    ['user', 'assistant', 'assistant', 'assistant'],
    `${what}: one user message and three assistant messages (no step repeated or lost)`,
  );
  assertEqual(stored.at(-1)?.content, FINAL_ANSWER, `${what}: last stored message`);
  assertEqual(loaded.session.lease, null, `${what}: lease after the run completed`);
  const calls = stored.flatMap((m) => m.toolCalls ?? []);
  assertEqual(calls.length, 3, `${what}: tool calls stored`);
  for (const call of calls) {
    const results = stored.filter((m) => m.role === 'tool' && m.toolCallId === call.id);
    assert(
      results.length === 1,
      `${what}: tool call ${call.name} (${call.id}) has ${results.length} result messages; exactly one is required`,
    );
    const effect = s.ledger.effects.get(call.id);
    if (call.name === 'send_email') {
      assert(
        (effect?.count ?? 0) <= 1,
        `${what}: send_email (${call.id}) ran ${effect?.count} times; a tool that is not safe to retry must never run twice`,
      );
      if (!effect)
        assertEqual(
          results[0]!.kind,
          'tool-durability-error',
          `${what}: result of an interrupted send_email that never ran`,
        );
    }
    if (call.name === 'charge') {
      assert(
        effect?.count === 1,
        `${what}: charge (${call.id}) took effect ${effect?.count ?? 0} times; reconcile must make it exactly once`,
      );
    }
    if (effect)
      assert(
        effect.keys.size === 1,
        `${what}: ${call.name} (${call.id}) saw ${effect.keys.size} different idempotency keys`,
      );
  }
  for (const callId of s.ledger.effects.keys()) {
    assert(
      calls.some((call) => call.id === callId),
      `${what}: a side effect ran for tool call ${callId}, which is not in the stored conversation`,
    );
  }
}

/** Runs with one fault; a crash must surface, then plain resumes must complete the run. */
async function crashAndResume(ctx: CheckContext, plan: FaultPlan, label: string): Promise<void> {
  const s = scenario();
  const c = newCase(label);
  const what = `crash ${plan.when} ${plan.op} #${plan.call}`;
  const faulty = faultyStore(ctx.store, plan);
  // A "dead" process's lease calls can only fail with the crash: anything else is a finding.
  const backgroundErrors: unknown[] = [];
  let result: RunResult;
  try {
    result = await runOnce(s, faulty, c, USER_MESSAGE, CRASHED_RUN_TTL_MS, backgroundErrors);
    // The fault point was never reached (results that settle together may share an append).
    assert(!faulty.tripped, `${what}: the run reported success although the process "died"`);
  } catch (error) {
    if (!isSimulatedCrash(error))
      violation(`${what}: the run failed with ${describeError(error)} instead of the simulated crash`);
    try {
      result = await resume(s, ctx.store, c);
    } catch (resumeError) {
      return violation(`${what}: resuming failed with ${describeError(resumeError)}`);
    }
  }
  for (const error of backgroundErrors) {
    if (!isSimulatedCrash(error))
      violation(
        `${what}: a lease call of the crashed run failed with ${describeError(error)}, not the simulated crash`,
      );
  }
  await checkInvariants(ctx, s, c, result, what);
}

/** Appends made by one clean run of the scenario: the crash points to try. */
async function countAppends(ctx: CheckContext): Promise<number> {
  const s = scenario();
  const c = newCase('count');
  const counting = faultyStore(ctx.store, {
    op: 'append',
    call: Number.MAX_SAFE_INTEGER,
    when: 'before',
    effect: 'crash',
  });
  const result = await runOnce(s, counting, c, USER_MESSAGE);
  await checkInvariants(ctx, s, c, result, 'clean run');
  return counting.calls.append;
}

const crashMatrixChecks: ConformanceCheck[] = [
  {
    name: 'crash matrix: a clean run of the scripted agent keeps every invariant',
    requires: ['durable'],
    async run(ctx) {
      const appends = await countAppends(ctx);
      assert(appends >= 4, `a clean run made ${appends} appends; the scenario needs at least 4`);
    },
  },
  {
    name: 'crash matrix: a crash before or after every append, then resume, never repeats a side effect',
    requires: ['durable'],
    timeoutMs: 180_000,
    async run(ctx) {
      const appends = await countAppends(ctx);
      for (let call = 1; call <= appends; call++) {
        for (const when of ['before', 'after'] as const) {
          await crashAndResume(ctx, { op: 'append', call, when, effect: 'crash' }, `append-${call}-${when}`);
        }
      }
    },
  },
  {
    name: 'crash matrix: a crash at acquireLease or the first load, then resume, completes the run',
    requires: ['durable'],
    timeoutMs: 60_000,
    async run(ctx) {
      for (const op of ['acquireLease', 'load'] as const) {
        for (const when of ['before', 'after'] as const) {
          await crashAndResume(ctx, { op, call: 1, when, effect: 'crash' }, `${op}-${when}`);
        }
      }
    },
  },
  {
    name: 'crash matrix: an acknowledgement lost at any append is resolved by re-reading, in one run',
    requires: ['durable'],
    timeoutMs: 120_000,
    async run(ctx) {
      const appends = await countAppends(ctx);
      for (let call = 1; call <= appends; call++) {
        for (const when of ['before', 'after'] as const) {
          const s = scenario();
          const c = newCase(`ack-${call}-${when}`);
          const what = `ack lost ${when} append #${call}`;
          let result: RunResult;
          try {
            result = await runOnce(
              s,
              faultyStore(ctx.store, { op: 'append', call, when, effect: 'ack-lost' }),
              c,
              USER_MESSAGE,
            );
          } catch (error) {
            return violation(
              `${what}: the run failed with ${describeError(error)}; it must settle the outcome by re-reading`,
            );
          }
          await checkInvariants(ctx, s, c, result, what);
        }
      }
    },
  },
];

export const crashMatrixSpec: ConformanceSpec = { title: 'crash matrix', checks: crashMatrixChecks };
