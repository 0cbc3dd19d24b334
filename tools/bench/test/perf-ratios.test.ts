import { join } from 'node:path';
import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, openToolTarget, type RawAppendFloor } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureAppendRatio, measureLoopRatio, measureStepOverhead } from '../src/index.ts';

// The custom node:sqlite store of docs/custom-store.md: a real store with a hand-written floor.
const customTarget = join(import.meta.dirname, '../../../docs/examples/custom-store/conformance-target.ts');

// The perf job's measurements (`pnpm perf`) must keep working, but CI never judges their times:
// these tests check what they measure and report, not how fast anything is.
describe('the perf job measurements (shape only, never judged on time)', () => {
  let target: OpenTestTarget;
  let store: AgentStore;
  let floor: RawAppendFloor;
  beforeAll(async () => {
    target = await openToolTarget(customTarget);
    store = await target.createStore();
    floor = target.capabilities!.floor!;
  });
  afterAll(async () => {
    await store.close();
    await target.close();
  });
  const positive = (value: number) => expect(Number.isFinite(value) && value > 0).toBe(true);

  it('measureAppendRatio times the store and the floor the same number of times', async () => {
    const m = await measureAppendRatio(store, floor, { warmup: 1, samples: 5 });
    expect(m.samples).toBe(5);
    positive(m.storeMs);
    positive(m.floorMs);
    expect(m.ratio).toBeCloseTo(m.storeMs / m.floorMs, 10);
  });

  it('measureLoopRatio subtracts the stateless run and reports it', async () => {
    const m = await measureLoopRatio(store, floor, { warmup: 1, samples: 3 });
    expect(m.samples).toBe(3);
    positive(m.floorMs);
    positive(m.loopCpuMs!);
    expect(m.storeMs).toBeGreaterThanOrEqual(0);
  });

  it('measureStepOverhead reports the overhead per step against one floor append', async () => {
    const m = await measureStepOverhead(store, floor, { warmup: 1, samples: 3, modelLatencyMs: 1 });
    expect(m.samples).toBe(3);
    expect(m.modelLatencyMs).toBe(1);
    positive(m.floorAppendMs);
    expect(m.overheadPerStepMs).toBeGreaterThanOrEqual(0);
    expect(m.ratio).toBeCloseTo(m.overheadPerStepMs / m.floorAppendMs, 10);
  });
});
