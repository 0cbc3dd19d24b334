import { describe, expect, it } from 'vitest';
import { roundOrders, sampleInterleaved, type TimedSide } from '../src/sampler.ts';

describe('the order sides are sampled in', () => {
  it('runs every side exactly once per sample, each sample in a fresh order', async () => {
    const sequence: number[] = [];
    const sides: TimedSide[] = Array.from({ length: 5 }, (_, side) => () => async () => {
      sequence.push(side);
    });
    const times = await sampleInterleaved(sides, { warmup: 1, samples: 40, seed: 7 });
    expect(times.map((kept) => kept.length)).toEqual([40, 40, 40, 40, 40]);
    const samples = Array.from({ length: 41 }, (_, i) => sequence.slice(i * 5, i * 5 + 5));
    for (const sample of samples) expect([...sample].sort()).toEqual([0, 1, 2, 3, 4]);
    // Not a rotation: over 40 samples every side runs right after each other side at least once,
    // where a rotation would keep each behind the same neighbour.
    const after = new Set<string>();
    for (const sample of samples) for (let k = 1; k < 5; k++) after.add(`${sample[k - 1]}>${sample[k]}`);
    expect(after.size).toBe(20);
  });

  it('does not start every round the same way: small consecutive seeds give unrelated first orders', () => {
    // Rounds seed 2, 3, 4, …: the last side of each round's first sample must vary.
    const lastOfFirst = Array.from({ length: 20 }, (_, r) => roundOrders(12, r + 2)()[11]);
    expect(new Set(lastOfFirst).size).toBeGreaterThan(5);
  });

  it('gives the same orders for the same seed and others for another seed', () => {
    const draw = (seed: number) => {
      const next = roundOrders(6, seed);
      return Array.from({ length: 10 }, next);
    };
    expect(draw(3)).toEqual(draw(3));
    expect(draw(3)).not.toEqual(draw(4));
  });
});
