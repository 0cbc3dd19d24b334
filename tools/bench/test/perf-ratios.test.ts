import { join } from 'node:path';
import type { AgentStore } from '@agentstore/core';
import { type OpenTestTarget, openToolTarget, type RawAppendFloor } from '@agentstore/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measurePerfStep, perfVerdicts } from '../src/index.ts';

// The custom node:sqlite store of docs/custom-store.md: a real store with a hand-written floor.
const customTarget = join(import.meta.dirname, '../../../docs/examples/custom-store/conformance-target.ts');

// The perf job's measurement (`pnpm perf`) must keep working, but CI never judges its times:
// these tests check what it measures, reports and judges, not how fast anything is.
describe('the perf job (shape only, never judged on time)', () => {
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

  it('measures the bench per-step figures in every round and leaves no session behind', async () => {
    const rounds: number[] = [];
    const step = await measurePerfStep(
      store,
      floor,
      { rounds: 2, samples: 1, steps: 2, modelLatencyMs: 1 },
      (done) => rounds.push(done),
    );
    expect(rounds).toEqual([1, 2]);
    expect(step.steps).toBe(2);
    expect(step.marginalPerStep.rounds).toBe(2);
    expect(step.overheadPerStep.rounds).toBe(2);
    expect(step.floor!.pacedAppend.rounds).toBe(2);
    expect(step.floor!.twoCommit.rounds).toBe(2);
    expect((await store.listSessions({ limit: 100 })).sessions).toEqual([]);

    const verdicts = perfVerdicts(step, 3);
    expect(verdicts.map((v) => [v.what, v.limit])).toEqual([
      ['write #1 via store ÷ one floor append', 3],
      ['marginal durable overhead per tool step ÷ two-commit floor step', 3],
      [expect.stringMatching(/÷ one floor append paced as a step \(the bench headline; model 1 ms\)$/), null],
    ]);
    expect(verdicts[0]!.ratio).toEqual(step.floor!.storeAppendVsAppend);
    expect(verdicts[2]!.ratio).toEqual(step.floor!.overheadVsPacedAppend);
  });

  it('fails a judged ratio whose median round is beyond the limit, and never the reported one', () => {
    const ratio = (median: number) => ({ median, min: median, max: median });
    const spread = { p50Us: 1, minUs: 1, maxUs: 1, rounds: 1, samplesPerRound: 1 };
    const step = {
      modelLatencyMs: 2,
      steps: 10,
      durableRun: spread,
      durableLongRun: spread,
      statelessRun: spread,
      statelessLongRun: spread,
      overheadPerStep: spread,
      overheadAllStepsPerStep: spread,
      marginalPerStep: spread,
      fixedPerRun: spread,
      storeAppend: spread,
      floor: {
        pacedAppend: spread,
        overheadVsPacedAppendPooled: 9,
        overheadAllStepsVsPacedAppendPooled: 9,
        overheadVsPacedAppend: ratio(9),
        inLoopAppend: spread,
        overheadVsInLoopAppendPooled: 9,
        overheadVsInLoopAppend: ratio(9),
        inLoopContext: spread,
        overheadVsAppend: ratio(9),
        append: spread,
        oneCommit: spread,
        twoCommit: spread,
        marginalVsAppend: ratio(9),
        storeAppendVsAppend: ratio(1.1),
        marginalVsTwoCommit: ratio(3.5),
      },
    };
    expect(perfVerdicts(step, 3).map((v) => v.ok)).toEqual([true, false, true]);
    expect(perfVerdicts({ ...step, floor: null }, 3)).toEqual([]);
  });
});
