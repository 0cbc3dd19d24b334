import { describe, expect, it } from 'vitest';
import { assertPlainJson, isPlainJson, isWellFormedText, MAX_JSON_DEPTH } from '../src/store/index.ts';

const refusal = (value: unknown, path = 'value') => {
  try {
    assertPlainJson(value, path);
  } catch (error) {
    return error as { code: string; argument: string; message: string };
  }
  throw new Error('accepted');
};

describe('the JSON boundary', () => {
  it('accepts plain JSON, null-prototype objects and shared (non-cyclic) references', () => {
    const shared = { a: 1 };
    const bare = Object.assign(Object.create(null), { x: [1, 'two', null, true, -0.5] });
    for (const value of [
      null,
      true,
      0,
      -1.5,
      '',
      'ünï 🦜',
      [],
      {},
      [shared, shared],
      { shared, again: shared },
      bare,
    ]) {
      expect(() => assertPlainJson(value, 'v')).not.toThrow();
    }
  });

  it('names the path and the reason of everything JSON.stringify would change or refuse', () => {
    class Money {
      cents = 1;
    }
    const sparse = [1, 2, 3];
    delete sparse[1];
    const withProp = Object.assign([1], { extra: 2 });
    const cases: [unknown, string, RegExp][] = [
      [{ when: new Date(0) }, 'value.when', /Date is not JSON/],
      [{ a: [{ f: () => 1 }] }, 'value.a[0].f', /function is not JSON/],
      [{ s: Symbol('x') }, 'value.s', /Symbol is not JSON/],
      [{ n: 10n }, 'value.n', /BigInt is not JSON/],
      [{ u: undefined }, 'value.u', /undefined is not JSON/],
      [[Number.NaN], 'value[0]', /NaN is not JSON/],
      [{ i: Number.POSITIVE_INFINITY }, 'value.i', /Infinity is not JSON/],
      [{ m: new Map() }, 'value.m', /Map is not JSON/],
      [{ b: new Uint8Array(2) }, 'value.b', /Uint8Array is not JSON/],
      [{ c: new Money() }, 'value.c', /Money is not JSON/],
      [{ sparse }, 'value.sparse', /hole at index 1/],
      [{ withProp }, 'value.withProp', /properties besides its elements/],
      [{ 'odd key': { toJSON: () => undefined } }, 'value["odd key"].toJSON', /function is not JSON/],
      [{ text: 'x\uD800' }, 'value.text', /lone surrogate/],
      [{ 'k\uDFFF': 1 }, 'value["k\\udfff"]', /key that is not well-formed/],
      [{ [Symbol('k')]: 1 }, 'value', /Symbol keys/],
    ];
    for (const [value, argument, reason] of cases) {
      const error = refusal(value);
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.argument).toBe(argument);
      expect(error.message).toMatch(reason);
    }
  });

  it('refuses cycles and nesting past the documented depth, 100,000 deep included, without a stack overflow', () => {
    const cyclic: Record<string, unknown> = { a: { b: [] } };
    ((cyclic.a as { b: unknown[] }).b as unknown[]).push(cyclic);
    expect(refusal(cyclic, 'state')).toMatchObject({ argument: 'state.a.b[0]' });
    expect(refusal(cyclic, 'state').message).toMatch(/cycle/);

    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { d: deep };
    expect(refusal(deep, 'state').message).toMatch(new RegExp(`deeper than ${MAX_JSON_DEPTH}`));

    let atLimit: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) atLimit = [atLimit];
    expect(isPlainJson(atLimit)).toBe(true);
    expect(isPlainJson([atLimit])).toBe(false);
  });

  it('decides values of any size the same way: a large one, and a fault deep inside one, are judged in full', () => {
    // Past the quick check's reach (10,000 values), the full check decides, with the same rules.
    const wide = Array.from({ length: 20_000 }, (_, i) => ({ i, text: `v${i}` }));
    expect(isPlainJson(wide)).toBe(true);
    expect(refusal([...wide, { text: 'x\uD800' }], 'state')).toMatchObject({ argument: 'state[20000].text' });
    expect(refusal({ a: [1, 2, { b: new Date(0) }] }, 'state')).toMatchObject({ argument: 'state.a[2].b' });
    expect(isPlainJson(Object.assign(Object.create(null), { a: [null, true, -0, 'ok'] }))).toBe(true);
  });

  it('reads each value once: a getter that answers differently on a second read cannot talk its way in', () => {
    let reads = 0;
    const shifty = {
      get a() {
        reads += 1;
        return reads === 1 ? undefined : 1;
      },
    };
    expect(refusal(shifty, 'v')).toMatchObject({ argument: 'v.a' });
    expect(reads).toBe(1);
  });

  it('tells well-formed UTF-16 from lone surrogates', () => {
    for (const text of ['', 'a', '😀', 'x\uFFFD']) expect(isWellFormedText(text)).toBe(true);
    for (const text of ['x\uD800', 'x\uDBFF', 'x\uDFFF', '\uDC00😀'])
      expect(isWellFormedText(text)).toBe(false);
  });
});
