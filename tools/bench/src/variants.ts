import type { AgentStore, MessageRecord, NewMessage } from '@agentstore/core';
import type { RawAppendFloor } from '@agentstore/core/testing';
import { describeMachine, machineInfo } from './machine.ts';
import { sampleInterleaved } from './sampler.ts';
import { latencyStats } from './stats.ts';

export interface VariantResult {
  name: string;
  p50Us: number;
  p99Us: number;
  /** p50 ÷ the baseline variant's p50. */
  ratio: number;
}

/**
 * Times each variant (one operation per call) interleaved round by round, and relates every p50
 * to the `baseline` variant's — how an adapter's bench script puts its append next to the raw
 * driver floor and its design alternatives in one run.
 */
export async function compareVariants(
  variants: Record<string, () => Promise<unknown>>,
  options: { baseline: string; warmup: number; samples: number },
): Promise<VariantResult[]> {
  const names = Object.keys(variants);
  if (!names.includes(options.baseline))
    throw new Error(`no variant named ${JSON.stringify(options.baseline)}`);
  const times = await sampleInterleaved(
    names.map((name) => () => variants[name]!),
    { warmup: options.warmup, samples: options.samples },
  );
  const stats = times.map(latencyStats);
  const base = stats[names.indexOf(options.baseline)]!.p50Us;
  return names.map((name, i) => ({
    name,
    p50Us: stats[i]!.p50Us,
    p99Us: stats[i]!.p99Us,
    ratio: stats[i]!.p50Us / base,
  }));
}

/** The variants as a plain table under a title line. */
export function formatVariants(title: string, results: VariantResult[]): string {
  const width = Math.max(8, ...results.map((r) => r.name.length)) + 2;
  const lines = [
    title,
    `${'variant'.padEnd(width)}${'p50 µs'.padStart(10)}${'p99 µs'.padStart(10)}${'p50 / base'.padStart(12)}`,
    ...results.map(
      (r) =>
        `${r.name.padEnd(width)}${r.p50Us.toFixed(0).padStart(10)}${r.p99Us.toFixed(0).padStart(10)}${r.ratio.toFixed(2).padStart(12)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** One line naming the machine a script's figures came from. */
export const machineLine = (): string => `Machine: ${describeMachine(machineInfo())}`;

/**
 * The two variants every adapter bench starts from: `store.append` and the raw floor's append of
 * the same rows, each on a session of its own that it creates. Add the adapter's own variants.
 */
export async function storeAndFloorVariants(
  store: AgentStore,
  floor: RawAppendFloor,
  batch: () => NewMessage[],
  labels: { store: string; floor: string },
): Promise<Record<string, () => Promise<unknown>>> {
  const id = crypto.randomUUID();
  const heads = { store: 0, floor: 0 };
  for (const side of ['store', 'floor'] as const) {
    heads[side] = (
      await store.append(`${side}-${id}`, { expectedSeq: 0, messages: batch(), lease: null })
    ).headSeq;
  }
  return {
    [labels.store]: async () => {
      heads.store = (
        await store.append(`store-${id}`, { expectedSeq: heads.store, messages: batch(), lease: null })
      ).headSeq;
    },
    [labels.floor]: async () => {
      const records: MessageRecord[] = batch().map((m, i) => ({ ...m, seq: heads.floor + 1 + i }));
      await floor.append(`floor-${id}`, heads.floor, records);
      heads.floor += records.length;
    },
  };
}
