import type { D1DatabaseLike, D1StatementLike } from './d1-binding.ts';

/** More distinct statements than the store ever builds (fixed ones, INSERTs of 1–98 rows, list filters). */
const MAX_CACHED = 256;

/**
 * The binding with `prepare` memoised by SQL text. A prepared statement is immutable — `bind()`
 * returns a new one — so one can serve every append; this saves re-creating it per call (and,
 * through Miniflare's Node proxy, a round trip per statement).
 */
export function withStatementCache(db: D1DatabaseLike): D1DatabaseLike {
  const cache = new Map<string, D1StatementLike>();
  return {
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= MAX_CACHED) cache.clear();
        statement = db.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    batch: (statements) => db.batch(statements),
  };
}
