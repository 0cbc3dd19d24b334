// Time ratios to the hand-written floor: judged by the explicit perf job (`pnpm perf`), never by
// the CI test suite, where a loaded machine would flip them.
import {
  type AgentStore,
  defineAgent,
  type MessageRecord,
  type NewMessage,
  run,
  tool,
} from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import { type ScriptStep, scriptedLlm } from '@agentstore/core/testing';
import { sampleInterleaved } from '../sampler.ts';
import { median } from '../stats.ts';
import { benchMessage as message, messageOfPayload, benchSessionInit as sessionInit } from '../workload.ts';

export const DEFAULT_MAX_FLOOR_RATIO = 3;

const freshId = (label: string): string => `bench-${label}-${crypto.randomUUID()}`;

export interface RatioMeasurement {
  /** p50 through the store, in milliseconds. */
  storeMs: number;
  /** p50 through the hand-written floor, in milliseconds. */
  floorMs: number;
  ratio: number;
  samples: number;
  /** For the loop: p50 of the same run without a store (model, tools, validation), subtracted from `storeMs`. */
  loopCpuMs?: number;
}

export interface PerfSampling {
  /** Rounds run first and thrown away (connections, prepared statements, JIT). */
  warmup: number;
  /** Rounds kept: each times every side once, in rotating order. */
  samples: number;
}

/** Runs both sides alternately (who goes first alternates too), drops the warm-up, compares p50s. */
async function compare(
  sampling: PerfSampling,
  storeSide: () => Promise<unknown>,
  floorSide: () => Promise<unknown>,
): Promise<RatioMeasurement> {
  const [storeTimes, floorTimes] = await sampleInterleaved([() => storeSide, () => floorSide], sampling);
  const storeMs = median(storeTimes!);
  const floorMs = median(floorTimes!);
  return { storeMs, floorMs, ratio: storeMs / floorMs, samples: storeTimes!.length };
}

/** A session that exists, for the floor to append to (the floor only appends to existing sessions). */
async function floorSession(store: AgentStore, label: string): Promise<{ id: string; head: number }> {
  const id = freshId(label);
  await store.append(id, {
    expectedSeq: 0,
    messages: [message()],
    session: { init: sessionInit() },
    lease: null,
  });
  return { id, head: 1 };
}

const withSeqs = (batch: NewMessage[], expectedSeq: number): MessageRecord[] =>
  batch.map((m, i) => ({ ...m, seq: expectedSeq + i + 1 }));

/** `store.append` of 3 × 300-byte messages vs `floor.append` of the same rows, same backend, same run. */
export async function measureAppendRatio(
  store: AgentStore,
  floor: RawAppendFloor,
  options: Partial<PerfSampling> = {},
): Promise<RatioMeasurement> {
  const viaStore = await floorSession(store, 'perf-store');
  const viaFloor = await floorSession(store, 'perf-floor');
  const batch = () => [messageOfPayload(300), messageOfPayload(300), messageOfPayload(300)];
  return compare(
    { warmup: 20, samples: 120, ...options },
    async () => {
      viaStore.head = (
        await store.append(viaStore.id, { expectedSeq: viaStore.head, messages: batch(), lease: null })
      ).headSeq;
    },
    async () => {
      const rows = withSeqs(batch(), viaFloor.head);
      await floor.append(viaFloor.id, viaFloor.head, rows);
      viaFloor.head += rows.length;
    },
  );
}

const STEPS = 10;

const workSteps = (): ScriptStep[] => [
  ...Array.from({ length: STEPS }, (_, n) => ({
    text: `step ${n}`,
    toolCalls: [{ name: 'work', input: { n } }],
  })),
  { text: 'done' },
];

const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-conformance',
    validate: (value: unknown) => ({ value }),
  },
};

const perfAgent = () =>
  defineAgent({
    name: 'conformance-perf-agent',
    instructions: 'Work ten steps.',
    maxIterations: STEPS + 1,
    tools: {
      work: tool({
        description: 'A step of work.',
        input: anyInput,
        safeToRetry: true,
        handler: () => ({ ok: true }),
      }),
    },
  });

/**
 * A 10-step scripted loop through `run()`, less the same loop's cost without a store, vs the 20
 * floor appends (2 writes per step) it minimally needs: what durability adds, against its floor.
 */
export async function measureLoopRatio(
  store: AgentStore,
  floor: RawAppendFloor,
  options: Partial<PerfSampling> = {},
): Promise<RatioMeasurement> {
  const steps = workSteps();
  const agent = perfAgent();
  const viaFloor = await floorSession(store, 'perf-loop-floor');
  // The same run without a store costs the loop's own CPU (scripted model, schema checks, ids):
  // not the store's doing, and on a µs-fast backend it would dominate the ratio. It is a third
  // side of the same interleaving, so machine load hits it alike.
  const [durable, floorTimes, stateless] = await sampleInterleaved(
    [
      async () => {
        const result = await run(agent, {
          store,
          sessionId: freshId('perf-loop'),
          message: 'go',
          llm: scriptedLlm(steps),
        });
        if (result.status !== 'complete') throw new Error(`the perf loop ended with status ${result.status}`);
      },
      async () => {
        for (let n = 0; n < STEPS; n++) {
          const call = { id: `call_${n}`, name: 'work', input: { n } };
          const writes: NewMessage[][] = [
            [message({ role: 'assistant', content: `step ${n}`, toolCalls: [call] })],
            [message({ role: 'tool', content: '{"ok":true}', toolCallId: call.id, toolName: 'work' })],
          ];
          for (const write of writes) {
            const rows = withSeqs(write, viaFloor.head);
            await floor.append(viaFloor.id, viaFloor.head, rows);
            viaFloor.head += rows.length;
          }
        }
      },
      () => run(agent, { message: 'go', llm: scriptedLlm(steps) }),
    ].map((side) => () => side),
    { warmup: 3, samples: 15, ...options },
  );
  const loopCpuMs = median(stateless!);
  const floorMs = median(floorTimes!);
  const storeMs = Math.max(median(durable!) - loopCpuMs, 0);
  return { storeMs, floorMs, ratio: storeMs / floorMs, samples: durable!.length, loopCpuMs };
}

export interface StepOverheadMeasurement {
  /** The scripted model's fixed latency per call, in milliseconds. */
  modelLatencyMs: number;
  /** p50 of a 10-step durable run() less p50 of the same run without a store, per tool step. */
  overheadPerStepMs: number;
  /** p50 of one floor append of a step's write #1 (the assistant message with its call). */
  floorAppendMs: number;
  /** `overheadPerStepMs / floorAppendMs`: near 1 when only write #1 is on a step's critical path. */
  ratio: number;
  samples: number;
}

/** `scriptedLlm` answering after a fixed latency, like a model behind a network. */
function slowLlm(steps: ScriptStep[], latencyMs: number) {
  const llm = scriptedLlm(steps);
  return {
    async generate(request: Parameters<typeof llm.generate>[0]) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, latencyMs);
        request.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(request.signal.reason);
          },
          { once: true },
        );
      });
      return llm.generate(request);
    },
  };
}

/**
 * What durability adds to a tool step when the model takes time to answer, against one floor
 * append: with write #2 overlapping the next model call, a step waits on one commit (write #1).
 * Three sides interleaved in rotating order: the durable run, the same run without a store, and
 * the floor's single append.
 */
export async function measureStepOverhead(
  store: AgentStore,
  floor: RawAppendFloor,
  options: Partial<PerfSampling> & { modelLatencyMs?: number } = {},
): Promise<StepOverheadMeasurement> {
  const { modelLatencyMs = 2, ...sampling } = options;
  const agent = perfAgent();
  const viaFloor = await floorSession(store, 'perf-step-floor');
  let n = 0;
  const [durable, stateless, floorAppend] = await sampleInterleaved(
    [
      async () => {
        const result = await run(agent, {
          store,
          sessionId: freshId('perf-step'),
          message: 'go',
          llm: slowLlm(workSteps(), modelLatencyMs),
        });
        if (result.status !== 'complete') throw new Error(`the perf loop ended with status ${result.status}`);
      },
      () => run(agent, { message: 'go', llm: slowLlm(workSteps(), modelLatencyMs) }),
      async () => {
        const call = { id: `call_${n++}`, name: 'work', input: { n } };
        const rows = withSeqs(
          [message({ role: 'assistant', content: `step ${n}`, toolCalls: [call] })],
          viaFloor.head,
        );
        await floor.append(viaFloor.id, viaFloor.head, rows);
        viaFloor.head += rows.length;
      },
    ].map((side) => () => side),
    { warmup: 2, samples: 15, ...sampling },
  );
  const overheadPerStepMs = Math.max(median(durable!) - median(stateless!), 0) / STEPS;
  const floorAppendMs = median(floorAppend!);
  return {
    modelLatencyMs,
    overheadPerStepMs,
    floorAppendMs,
    ratio: overheadPerStepMs / floorAppendMs,
    samples: durable!.length,
  };
}
