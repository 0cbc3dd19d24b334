import { describe, expect, it } from 'vitest';
import { assertPlainJson, MAX_JSON_NODES } from '../src/store/json-boundary.ts';

/*
 * Attack on the boundary's size guard: `assertPlainJson` counts values as it pops them, but pushes
 * every child of a container first. A tool returning a 30-million-element array (a "fetch all
 * rows" handler) costs ~60 s of CPU and ~3 GB of heap before it is refused as "more than 1,000,000
 * values" — measured on this machine with the unfixed code; enough to kill the process right
 * after the effect fired, and again on every resume of a safeToRetry tool. Counted here by element
 * reads through a Proxy, not by time: refusing a container whose children alone exceed the limit
 * must not read them.
 */

function countingArray(length: number) {
  let reads = 0;
  const target = new Array<number>(length).fill(0);
  const proxy = new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(t, key, receiver);
    },
  });
  return { proxy, reads: () => reads };
}

describe('a container wider than the value limit', () => {
  it('is refused without visiting its elements', () => {
    const { proxy, reads } = countingArray(MAX_JSON_NODES + 10);
    expect(() => assertPlainJson({ rows: proxy }, 'output')).toThrow(/more than 1000000 JSON values/);
    expect(reads(), 'elements read before refusing').toBeLessThanOrEqual(MAX_JSON_NODES);
  });

  it('a value of exactly the limit is still accepted', () => {
    // The object and its array are 2 values: the limit minus 2 elements fills it exactly.
    const rows = new Array<number>(MAX_JSON_NODES - 2).fill(0);
    expect(() => assertPlainJson({ rows }, 'output')).not.toThrow();
    expect(() => assertPlainJson({ rows: [...rows, 0] }, 'output')).toThrow(/more than/);
  });
});
