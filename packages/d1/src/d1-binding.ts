/**
 * The part of a D1 binding this store uses, as a structural type, so the published types do
 * not force `@cloudflare/workers-types` on anyone: its `D1Database` (and the global one that
 * `wrangler types` generates, and miniflare's) fits it. `test/d1-binding.test-d.ts` checks that.
 */
export interface D1ResultLike<Row = Record<string, unknown>> {
  results: Row[];
}

export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
  all<Row = Record<string, unknown>>(): Promise<D1ResultLike<Row>>;
}

export interface D1DatabaseLike {
  prepare(query: string): D1StatementLike;
  /** Runs the statements in one transaction: an error in any of them rolls back all of them. */
  batch<Row = unknown>(statements: D1StatementLike[]): Promise<D1ResultLike<Row>[]>;
}
