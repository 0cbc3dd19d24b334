import type { D1Database } from '@cloudflare/workers-types';
import type { Miniflare } from 'miniflare';
import { expectTypeOf, test } from 'vitest';
import { type D1DatabaseLike, d1Store } from '../src/index.ts';

test('the D1Database of @cloudflare/workers-types is a binding d1Store accepts', () => {
  expectTypeOf<D1Database>().toExtend<D1DatabaseLike>();
  expectTypeOf(d1Store).toBeCallableWith({ binding: {} as D1Database });
});

test("miniflare's D1 binding is one too", () => {
  expectTypeOf<Awaited<ReturnType<Miniflare['getD1Database']>>>().not.toBeAny();
  expectTypeOf<Awaited<ReturnType<Miniflare['getD1Database']>>>().toExtend<D1DatabaseLike>();
});

test('a non-binding is refused at compile time', () => {
  // @ts-expect-error a KV-like object has no prepare/batch
  d1Store({ binding: { get: async () => null } });
});
