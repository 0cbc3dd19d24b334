/**
 * The server's clock as the ISO-8601 text the columns hold (UTC, milliseconds), optionally plus
 * a bound TTL. Lease expiry is judged and written by this one authority clock, never a client's,
 * so a client whose clock is off can neither take a live lease nor shorten or stretch one.
 * `statement_timestamp()` is one value for the whole statement (and never later than the moment
 * the row is locked, so waiting on a lock can only make a lease look *less* expired).
 */
export const serverIso = (plusMs?: string) =>
  `to_char((statement_timestamp()${plusMs ? ` + ${plusMs} * interval '1 millisecond'` : ''}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
export const SERVER_NOW = serverIso();
