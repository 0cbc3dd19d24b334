import {
  type AgentStore,
  defineAgent,
  type MessageRecord,
  run,
  SessionBusyError,
  tool,
} from '@agentstore/core';
import { faultyStore, scriptedLlm, unreachableLlm } from '@agentstore/core/testing';

/** A Standard Schema that accepts any object: the worker bundle carries no schema library. */
const anyObject = {
  '~standard': {
    version: 1,
    vendor: 'agentstore-d1-test',
    types: undefined as unknown as { input: Record<string, unknown>; output: Record<string, unknown> },
    validate: (value: unknown) =>
      typeof value === 'object' && value !== null
        ? { value: value as Record<string, unknown> }
        : { issues: [{ message: 'expected an object' }] },
  },
} as const;

export interface RunScenarioReport {
  /** Names along the cause chain of the crashed run's error. */
  crashedWith: string[];
  resumed: { status: string; response: string; headSeq: number };
  replayed: { status: string; response: string; modelCalls: number };
  sideEffects: { sendEmail: number; lookup: number; reconcile: number };
  seqs: number[];
  toolCalls: number;
  resultsPerCall: number[];
  concurrentRuns: { fulfilled: number; busy: number; other: string[] };
}

function causeChain(error: unknown): string[] {
  const names: string[] = [];
  for (let e = error; e instanceof Error && names.length < 5; e = e.cause) names.push(e.name);
  return names;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries while a crashed run's lease has not expired yet, as a real retrying worker would. */
async function whenFree<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof SessionBusyError) || tries > 50) throw error;
      await sleep(Math.min(error.retryAfterMs, 100));
    }
  }
}

/**
 * A durable `run()` inside the worker: a three-step agent whose process "dies" after the
 * side-effecting tool ran but before its result was committed; a second run resumes it and
 * reconciles instead of sending twice; a third run answers from the store alone.
 */
export async function runScenario(store: AgentStore, sessionId: string): Promise<RunScenarioReport> {
  const sent = new Map<string, string>();
  const effects = { sendEmail: 0, lookup: 0, reconcile: 0 };
  const agent = defineAgent({
    name: 'mailer',
    instructions: 'Look the customer up, then email them.',
    tools: {
      lookup: tool({
        description: 'Reads a customer record (no side effect)',
        input: anyObject,
        safeToRetry: true,
        handler: async (input) => {
          effects.lookup++;
          return { customer: input.customer, email: 'ada@example.com' };
        },
      }),
      sendEmail: tool({
        description: 'Sends an email (side effect)',
        input: anyObject,
        handler: async (input, ctx) => {
          effects.sendEmail++;
          sent.set(ctx.idempotencyKey, String(input.to));
          return { sent: true };
        },
        reconcile: async (_input, ctx) => {
          effects.reconcile++;
          return sent.has(ctx.idempotencyKey)
            ? { happened: true, output: { sent: true } }
            : { happened: false };
        },
      }),
    },
  });
  const script = () =>
    scriptedLlm([
      { toolCalls: [{ id: 'call_lookup', name: 'lookup', input: { customer: 'ada' } }] },
      { toolCalls: [{ id: 'call_send', name: 'sendEmail', input: { to: 'ada@example.com' } }] },
      { text: 'Emailed Ada.' },
    ]);
  // Long enough that a loaded machine keeps a live lease; the resume waits out the dead one (whenFree).
  const leaseTtlMs = 2_000;

  // Appends: #1 user + lookup call, #2 lookup result, #3 send call, #4 send result. Die before #4.
  const dying = faultyStore(store, { op: 'append', call: 4, when: 'before', effect: 'crash' });
  const crashedWith = await run(agent, {
    store: dying,
    sessionId,
    message: 'Email Ada',
    llm: script(),
    leaseTtlMs,
  })
    .then(() => ['no crash'])
    .catch((error: unknown) => causeChain(error));

  const resumed = await whenFree(() => run(agent, { store, sessionId, llm: script(), leaseTtlMs }));
  const replayedLlm = unreachableLlm();
  let modelCalls = 0;
  const replayed = await run(agent, {
    store,
    sessionId,
    llm: {
      generate: (request) => {
        modelCalls++;
        return replayedLlm.generate(request);
      },
    },
  });

  const loaded = await store.load(sessionId);
  const messages: MessageRecord[] = loaded?.messages ?? [];
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  const sideEffects = { ...effects };

  // Two runs racing on one fresh session: one holds the lease, the other is told it is busy.
  const raceId = `${sessionId}/race`;
  const race = await Promise.allSettled(
    [0, 1].map(() => run(agent, { store, sessionId: raceId, message: 'Email Ada', llm: script() })),
  );

  return {
    crashedWith,
    resumed: { status: resumed.status, response: resumed.response, headSeq: resumed.headSeq },
    replayed: { status: replayed.status, response: replayed.response, modelCalls },
    sideEffects,
    seqs: messages.map((m) => m.seq),
    toolCalls: calls.length,
    resultsPerCall: calls.map(
      (c) => messages.filter((m) => m.role === 'tool' && m.toolCallId === c.id).length,
    ),
    concurrentRuns: {
      fulfilled: race.filter((r) => r.status === 'fulfilled').length,
      busy: race.filter((r) => r.status === 'rejected' && r.reason instanceof SessionBusyError).length,
      other: race.flatMap((r) =>
        r.status === 'rejected' && !(r.reason instanceof SessionBusyError) ? [String(r.reason)] : [],
      ),
    },
  };
}
