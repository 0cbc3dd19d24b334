import { type AgentStore, defineAgent, type JsonValue, type NewMessage, run, tool } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { scriptedLlm } from '@agentstore/core/testing';
import { assert, assertContiguous, assertEqual } from '../assertions.ts';
import type { ConformanceCheck, ConformanceSpec } from '../check.ts';
import { appendInChunks, freshId, sessionInit, messages as someMessages } from '../fixtures.ts';
import type { OpenTestTarget } from '../target.ts';

// The perf gate CI runs: deterministic counts of what a tool step costs the store (commits,
// store calls, bytes written), never a time. Time ratios to the floor are judged by the explicit
// perf job (`pnpm perf`, ../perf/), where enough interleaved samples make them trustworthy.

const STEPS = 10;
/** Long enough that the lease is never renewed during a counted run. */
const LEASE_TTL_MS = 3_600_000;
/** History a long session starts with in the growth check. */
const LONG_HISTORY = 400;

const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-conformance',
    validate: (value: unknown) => ({ value: value as JsonValue }),
  },
};

/** What a run asked of the store, in order. */
interface StoreLog {
  calls: Record<'load' | 'append' | 'acquireLease' | 'renewLease' | 'releaseLease', number>;
  /** Full loads (re-reads after an unknown append outcome pass `afterSeq`). */
  fullLoads: number;
  /**
   * Per append: message ids, the bytes it carried (messages as measured by core, plus the
   * session state) and, when the target counts them, its round trips (the loop never overlaps
   * two store calls, so the difference around one append is that append's).
   */
  appends: { ids: string[]; bytes: number; roundTrips: number | null }[];
}

function countedStore(store: AgentStore, roundTrips?: () => number): { store: AgentStore; log: StoreLog } {
  const log: StoreLog = {
    calls: { load: 0, append: 0, acquireLease: 0, renewLease: 0, releaseLease: 0 },
    fullLoads: 0,
    appends: [],
  };
  const counted: AgentStore = {
    durable: store.durable,
    limits: store.limits,
    load: (id, options) => {
      log.calls.load += 1;
      if (options?.afterSeq === undefined) log.fullLoads += 1;
      return store.load(id, options);
    },
    append: (id, input) => {
      log.calls.append += 1;
      const bytes =
        input.messages.reduce((sum, m: NewMessage) => sum + messageByteLength(m), 0) +
        JSON.stringify(input.session?.state ?? null).length;
      const entry = { ids: input.messages.map((m) => m.id), bytes, roundTrips: null as number | null };
      log.appends.push(entry);
      const before = roundTrips?.() ?? 0;
      return store.append(id, input).finally(() => {
        if (roundTrips) entry.roundTrips = roundTrips() - before;
      });
    },
    acquireLease: (id, input) => {
      log.calls.acquireLease += 1;
      return store.acquireLease(id, input);
    },
    renewLease: (id, input) => {
      log.calls.renewLease += 1;
      return store.renewLease(id, input);
    },
    releaseLease: (id, input) => {
      log.calls.releaseLease += 1;
      return store.releaseLease(id, input);
    },
    listSessions: (input) => store.listSessions(input),
    deleteSession: (id) => store.deleteSession(id),
    deleteIdleSessions: (input) => store.deleteIdleSessions(input),
    close: () => store.close(),
  };
  return { store: counted, log };
}

const agent = defineAgent({
  name: 'conformance-perf-agent',
  instructions: 'Work.',
  maxIterations: STEPS + 1,
  tools: {
    work: tool({ description: 'A step of work.', input: anyInput, handler: () => ({ ok: true }) }),
  },
});

/** A `steps`-step run on `sessionId`, after `priorAnswers` answered turns already stored there. */
async function countedRun(
  store: AgentStore,
  sessionId: string,
  { priorAnswers = 0, roundTrips }: { priorAnswers?: number; roundTrips?: () => number } = {},
): Promise<StoreLog> {
  const counted = countedStore(store, roundTrips);
  const script = [
    ...Array.from({ length: priorAnswers }, () => ({})),
    ...Array.from({ length: STEPS }, (_, n) => ({
      text: `step ${n}`,
      toolCalls: [{ name: 'work', input: { n } }],
      usage: { inputTokens: 1, outputTokens: 1 },
    })),
    { text: 'done', usage: { inputTokens: 1, outputTokens: 1 } },
  ];
  const result = await run(agent, {
    store: counted.store,
    sessionId,
    message: 'go',
    llm: scriptedLlm(script),
    leaseTtlMs: LEASE_TTL_MS,
  });
  assertEqual(result.status, 'complete', 'the status of the counted run');
  return counted.log;
}

/** A session holding `count` finished turns (user question, assistant answer), appended lease-less. */
async function seedHistory(store: AgentStore, sessionId: string, count: number): Promise<number> {
  const turns = someMessages(count).map((m, i) => (i % 2 ? { ...m, role: 'assistant' as const } : m));
  await appendInChunks(store, sessionId, turns, { init: sessionInit({ agentName: agent.name }) });
  return count / 2;
}

const perfGateChecks: ConformanceCheck[] = [
  {
    name: 'perf gate: a tool step through run() costs exactly two commits; a run, one lease grant and one load',
    requires: ['durable'],
    timeoutMs: 60_000,
    async run(ctx) {
      const { store, target } = ctx;
      const sessionId = freshId('perf-counts');
      const log = await countedRun(store, sessionId);
      const bytes = log.appends.map((a) => a.bytes);
      console.log(
        `[agentstore perf] ${target.name}: ${(log.calls.append - 1) / STEPS} commits per tool step (${log.calls.append} appends with the answer, ` +
          `${log.calls.load} load, ${log.calls.acquireLease} lease grant for ${STEPS} steps); ${Math.min(...bytes)}–${Math.max(...bytes)} B per append`,
      );
      // 2 appends per tool step, 1 for the final answer, which also releases the lease.
      assertEqual(
        log.calls,
        { load: 1, append: 2 * STEPS + 1, acquireLease: 1, renewLease: 0, releaseLease: 0 },
        'store calls of a 10-step run',
      );
      assertEqual(log.fullLoads, 1, 'full loads of a 10-step run');
      const ids = log.appends.flatMap((a) => a.ids);
      assertEqual(ids.length, 2 + 2 * STEPS, 'messages appended by a 10-step run (user, 2 per step, answer)');
      assertEqual(new Set(ids).size, ids.length, 'distinct message ids appended');
      const stored = (await assertContiguous(ctx, sessionId, 'the counted session')).messages;
      assertEqual(
        stored.map((m) => m.id),
        ids,
        'stored messages vs appended ones (each exactly once, in order)',
      );
    },
  },
  {
    name: `perf gate: a step writes the same bytes and makes the same store calls after ${LONG_HISTORY} stored messages as on a fresh session`,
    requires: ['durable'],
    timeoutMs: 120_000,
    async run({ store }) {
      const fresh = await countedRun(store, freshId('perf-fresh'));
      const longId = freshId('perf-long');
      const answered = await seedHistory(store, longId, LONG_HISTORY);
      const long = await countedRun(store, longId, { priorAnswers: answered });
      assertEqual(long.calls, fresh.calls, 'store calls: long session vs fresh one');
      assertEqual(long.fullLoads, 1, 'full loads of the run on the long session');
      // Same ids lengths, same contents, same usage digits: the bytes match exactly.
      assertEqual(
        long.appends.map((a) => a.bytes),
        fresh.appends.map((a) => a.bytes),
        'bytes per append: long session vs fresh one',
      );
      const perStep = fresh.appends.map((a) => a.bytes);
      assert(
        perStep.every((bytes) => bytes < 4096),
        `a step's append carries only the step's messages; saw ${Math.max(...perStep)} bytes`,
      );
    },
  },
  {
    name: 'perf gate: every append of a run() takes no more round trips than the floor takes for the same write',
    requires: ['durable', 'floor', 'roundTrips'],
    timeoutMs: 60_000,
    async run({ store, capabilities, target }) {
      const floor = capabilities.floor!;
      // Counted per instance by the target: this very store, and the floor apart from it.
      const count = (target as OpenTestTarget).roundTrips!.bind(target);
      const roundTrips = () => count(store);
      const floorId = freshId('perf-rt-floor');
      let head = await appendInChunks(store, floorId, someMessages(1), { init: sessionInit() });
      const floorTrips: number[] = [];
      // The first calls on a connection may prepare statements or load scripts: counted apart.
      for (let i = 0; i < 4; i++) {
        const rows = [{ ...someMessages(1)[0]!, seq: head + 1 }];
        const before = count(floor);
        await floor.append(floorId, head, rows);
        floorTrips.push(count(floor) - before);
        head += 1;
      }
      const floorPerAppend = Math.max(...floorTrips.slice(2));
      await countedRun(store, freshId('perf-rt-warm'));
      const log = await countedRun(store, freshId('perf-rt'), { roundTrips });
      const perAppend = log.appends.map((a) => a.roundTrips ?? 0);
      console.log(
        `[agentstore perf] ${target.name}: ${Math.max(...perAppend)} round trip(s) per run() append at most, the floor ${floorPerAppend}`,
      );
      assert(
        perAppend.every((trips) => trips <= floorPerAppend),
        `run()'s appends took ${perAppend.join(', ')} round trips; the floor takes ${floorPerAppend} per append`,
      );
    },
  },
];

export const perfGateSpec: ConformanceSpec = { title: 'perf gate', checks: perfGateChecks };
