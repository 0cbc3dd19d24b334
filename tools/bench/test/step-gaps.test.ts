import { run } from '@agentstore/core';
import { describe, expect, it } from 'vitest';
import { floorInLoop, handLoop, roundMeanGaps } from '../src/step.ts';
import {
  benchAgent,
  collectGarbage,
  fixedLatencyLlm,
  newModelMeter,
  stepMessages,
  waitUntil,
} from '../src/workload.ts';

describe('the scripted model’s clock and the per-step gaps behind the headline', () => {
  it('never answers before its latency is up, whatever the loop did before asking', async () => {
    const signal = new AbortController().signal;
    for (let i = 0; i < 50; i++) {
      // Synchronous work before the timer is set is what makes a bare timer fire early.
      const busyUntil = performance.now() + (i % 5) * 0.3;
      while (performance.now() < busyUntil);
      const due = performance.now() + 2;
      await waitUntil(due, signal);
      expect(performance.now()).toBeGreaterThanOrEqual(due);
    }
  });

  it('records one gap per tool step: from the reply being due to the next request', async () => {
    const gaps: number[] = [];
    const result = await run(benchAgent(4, 16), {
      message: 'go',
      llm: fixedLatencyLlm(4, 1, undefined, gaps),
    });
    expect(result.status).toBe('complete');
    expect(gaps).toHaveLength(4);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(0);
  });

  it('a hand loop waits for write #2 before the next write #1, and records every step', async () => {
    const events: string[] = [];
    const runs: number[][] = [];
    let n = 0;
    let inFlight = 0;
    const write = async (messages: { role: string }[]) => {
      expect(inFlight).toBe(0); // never two writes at once
      inFlight += 1;
      events.push(`${messages[0]!.role}>`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
    };
    await handLoop(3, 2, write, () => stepMessages(n++, 16), runs)()();
    expect(events).toEqual(['assistant>', 'tool>', 'assistant>', 'tool>', 'assistant>', 'tool>']);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toHaveLength(3);
  });

  it('the floor in the loop writes each call before its tool answers and each result after the next request, one write at a time', async () => {
    const events: string[] = [];
    const runs: number[][] = [];
    let n = 0;
    let inFlight = 0;
    // How long each write #1 (the call) took, on the clock the gaps are read from.
    const callWrites: number[] = [];
    const write = async (messages: { role: string; content: string }[]) => {
      expect(inFlight).toBe(0); // never two writes at once
      inFlight += 1;
      events.push(`${messages[0]!.role}>`);
      const began = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (messages[0]!.role === 'assistant') callWrites.push(performance.now() - began);
      inFlight -= 1;
    };
    const sample = floorInLoop(3, 2, 16, write, () => stepMessages(n++, 16), runs)();
    await sample();
    // Every write, the last result included, has landed when the sample ends.
    expect(events).toEqual(['assistant>', 'tool>', 'assistant>', 'tool>', 'assistant>', 'tool>']);
    expect(inFlight).toBe(0);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toHaveLength(3);
    // Write #1 is on the step's path: each gap holds its whole write #1 (measured, not assumed).
    for (const [i, gap] of runs[0]!.entries()) expect(gap).toBeGreaterThanOrEqual(callWrites[i]!);
  });

  it('the floor in the loop fails the sample when a write fails, rather than counting a step that wrote nothing', async () => {
    const runs: number[][] = [];
    let n = 0;
    let writes = 0;
    const write = async () => {
      writes += 1;
      if (writes === 3) throw new Error('the floor refused');
    };
    const sample = floorInLoop(3, 1, 16, write, () => stepMessages(n++, 16), runs)();
    await expect(sample()).rejects.toThrow('the floor refused');
    expect(runs).toEqual([]);
  });

  it('pools each round’s runs after the warm-up run, per side', () => {
    const sideA = [[100], [1, 3], [5], [7, 9], [11]];
    const sideB = [[100], [2], [4], [6], [8]];
    // warm-up dropped; 2 rounds of 2 samples: round 1 = A[1..2] + B[1..2], round 2 = A[3..4] + B[3..4]
    expect(roundMeanGaps([sideA, sideB], 2, 2)).toEqual([(1 + 3 + 5 + 2 + 4) / 5, (7 + 9 + 11 + 6 + 8) / 5]);
    expect(() => roundMeanGaps([[[1]]], 1, 1)).toThrow(/no step gaps/);
  });

  it('leaves out each run’s first step when asked, on every side alike', () => {
    const sideA = [
      [100, 100],
      [50, 1, 3],
      [60, 5],
    ];
    const sideB = [[100], [70, 2], [80, 4, 6]];
    expect(roundMeanGaps([sideA, sideB], 1, 2, { skipFirstStep: true })).toEqual([
      (1 + 3 + 5 + 2 + 4 + 6) / 6,
    ]);
    expect(roundMeanGaps([sideA, sideB], 1, 2)).toEqual([(50 + 1 + 3 + 60 + 5 + 70 + 2 + 80 + 4 + 6) / 10]);
  });

  it('a meter that collects first does so before it starts counting, without --expose-gc', async () => {
    expect(typeof collectGarbage).toBe('function');
    const meter = newModelMeter({ collectFirst: true });
    const result = await run(benchAgent(2, 16), { message: 'go', llm: fixedLatencyLlm(2, 0, meter) });
    expect(result.status).toBe('complete');
    expect(meter.calls).toBe(3);
    expect(meter.firstCall).not.toBeNull();
  });
});
