import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { type ToolContext, tool } from './index.ts';

test('the handler input is inferred from the input schema', () => {
  tool({
    description: 'typed',
    input: z.object({ to: z.string(), cents: z.number().optional() }),
    handler: (input, ctx) => {
      expectTypeOf(input).toEqualTypeOf<{ to: string; cents?: number | undefined }>();
      expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
      return { ok: true };
    },
  });
});

test('reconcile sees the same input and must return the handler output type', () => {
  tool({
    description: 'reconcilable',
    input: z.object({ id: z.string() }),
    handler: ({ id }) => ({ id }),
    reconcile: (input) => {
      expectTypeOf(input).toEqualTypeOf<{ id: string }>();
      return { happened: true, output: { id: input.id } };
    },
  });
});

test('safeToRetry must be a boolean', () => {
  tool({
    description: 'bad flag',
    input: z.object({}),
    // @ts-expect-error a string is not a boolean
    safeToRetry: 'yes',
    handler: () => null,
  });
});

test('a handler reading a field the schema lacks does not compile', () => {
  tool({
    description: 'narrow',
    input: z.object({ a: z.string() }),
    handler: (input) => {
      // @ts-expect-error `b` is not in the schema
      return input.b;
    },
  });
});
