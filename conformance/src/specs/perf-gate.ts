import {
  type AgentStore,
  defineAgent,
  type MessageRecord,
  type NewMessage,
  run,
  tool,
} from '@agentstore/core';
import { type ScriptStep, scriptedLlm } from '@agentstore/core/testing';
import { assert } from '../assertions.ts';
import { type ConformanceCheck, type ConformanceSpec, describeSpec } from '../check.ts';
import { freshId, message, messageOfBytes, sessionInit } from '../fixtures.ts';
import type { ConformanceTarget, RawAppendFloor } from '../target.ts';

export const DEFAULT_MAX_FLOOR_RATIO = 3;

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

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function timed(operation: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await operation();
  return performance.now() - start;
}

/** Fewest measured pairs a gate decides on, however slow the backend. */
const MIN_SAMPLES = 7;

export interface PerfSampling {
  warmup: number;
  samples: number;
  /** Stop early (after MIN_SAMPLES) once measuring has taken this long, so slow backends stay within the test timeout. */
  budgetMs: number;
}

/** Runs both sides alternately (who goes first alternates too), drops the warm-up, compares p50s. */
async function compare(
  { warmup, samples, budgetMs }: PerfSampling,
  storeSide: () => Promise<unknown>,
  floorSide: () => Promise<unknown>,
): Promise<RatioMeasurement> {
  const storeTimes: number[] = [];
  const floorTimes: number[] = [];
  const started = performance.now();
  for (let i = 0; storeTimes.length < samples; i++) {
    let storeTime: number;
    let floorTime: number;
    if (i % 2 === 0) {
      storeTime = await timed(storeSide);
      floorTime = await timed(floorSide);
    } else {
      floorTime = await timed(floorSide);
      storeTime = await timed(storeSide);
    }
    if (i >= warmup) {
      storeTimes.push(storeTime);
      floorTimes.push(floorTime);
    }
    if (storeTimes.length >= MIN_SAMPLES && performance.now() - started > budgetMs) break;
  }
  const storeMs = median(storeTimes);
  const floorMs = median(floorTimes);
  return { storeMs, floorMs, ratio: storeMs / floorMs, samples: storeTimes.length };
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
  const batch = () => [messageOfBytes(300), messageOfBytes(300), messageOfBytes(300)];
  return compare(
    { warmup: 20, samples: 120, budgetMs: 20_000, ...options },
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

const anyInput = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-conformance',
    validate: (value: unknown) => ({ value }),
  },
};

/**
 * A 10-step scripted loop through `run()`, less the same loop's cost without a store, vs the 20
 * floor appends (2 writes per step) it minimally needs: what durability adds, against its floor.
 */
export async function measureLoopRatio(
  store: AgentStore,
  floor: RawAppendFloor,
  options: Partial<PerfSampling> = {},
): Promise<RatioMeasurement> {
  const steps: ScriptStep[] = [
    ...Array.from({ length: STEPS }, (_, n) => ({
      text: `step ${n}`,
      toolCalls: [{ name: 'work', input: { n } }],
    })),
    { text: 'done' },
  ];
  const agent = defineAgent({
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
  const viaFloor = await floorSession(store, 'perf-loop-floor');
  // The same run without a store costs the loop's own CPU (scripted model, schema checks, ids):
  // not the store's doing, and on a µs-fast backend it would dominate the ratio.
  const statelessTimes: number[] = [];
  for (let i = 0; i < 25; i++) {
    const t = await timed(() => run(agent, { message: 'go', llm: scriptedLlm(steps) }));
    if (i >= 5) statelessTimes.push(t);
  }
  const loopCpuMs = median(statelessTimes);
  const measured = await compare(
    { warmup: 3, samples: 15, budgetMs: 30_000, ...options },
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
  );
  const storeMs = Math.max(measured.storeMs - loopCpuMs, 0);
  return { ...measured, storeMs, ratio: storeMs / measured.floorMs, loopCpuMs };
}

const format = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

export const perfGateChecks: ConformanceCheck[] = [
  {
    name: 'perf gate: store.append of 3 × 300-byte messages stays within maxFloorRatio of the raw floor',
    requires: ['floor'],
    timeoutMs: 120_000,
    async run({ store, target, capabilities }) {
      const limit = target.maxFloorRatio ?? DEFAULT_MAX_FLOOR_RATIO;
      const m = await measureAppendRatio(store, capabilities.floor!);
      console.log(
        `[agentstore perf] ${target.name}: append 3×300 B p50 ${format(m.storeMs)} vs floor ${format(m.floorMs)} ` +
          `= ${m.ratio.toFixed(2)}× (limit ${limit}×, ${m.samples} samples)`,
      );
      assert(
        m.ratio <= limit,
        `store.append p50 ${format(m.storeMs)} is ${m.ratio.toFixed(2)}× the floor's ${format(m.floorMs)}; the limit is ${limit}×`,
      );
    },
  },
  {
    name: 'perf gate: a 10-step run() stays within maxFloorRatio of 20 raw floor appends',
    requires: ['floor', 'durable'],
    timeoutMs: 120_000,
    async run({ store, target, capabilities }) {
      const limit = target.maxFloorRatio ?? DEFAULT_MAX_FLOOR_RATIO;
      const m = await measureLoopRatio(store, capabilities.floor!);
      console.log(
        `[agentstore perf] ${target.name}: 10-step run() durable writes p50 ${format(m.storeMs)} (loop CPU ${format(m.loopCpuMs ?? 0)} excluded) vs 20 floor appends ${format(m.floorMs)} ` +
          `= ${m.ratio.toFixed(2)}× (limit ${limit}×, ${m.samples} samples)`,
      );
      assert(
        m.ratio <= limit,
        `a 10-step run()'s durable writes p50 ${format(m.storeMs)} are ${m.ratio.toFixed(2)}× the ${format(m.floorMs)} of 20 floor appends; the limit is ${limit}×`,
      );
    },
  },
];

export const perfGateSpec: ConformanceSpec = { title: 'perf gate', checks: perfGateChecks };

/** Perf gate: the store's cost stays a small multiple of the cheapest correct write on its backend. */
export function describePerfGate(target: ConformanceTarget): void {
  describeSpec(target, perfGateSpec);
}
