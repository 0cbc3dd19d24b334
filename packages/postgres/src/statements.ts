import type { TableNames } from './schema.ts';
import { SERVER_NOW, serverIso } from './server-clock.ts';

/**
 * The SQL of every operation. Each is ONE statement, so it is atomic by itself and needs no
 * explicit transaction (nothing ever sits idle in a transaction). Identifiers come from
 * validated options only; every value is a bound parameter with an explicit type.
 */
export interface Statements {
  /** An append with expectedSeq > 0: inserts every message, or raises APPEND_REFUSED. */
  append: AppendStatements;
  /** The same with expectedSeq 0: may create the session. */
  appendFirst: AppendStatements;
  load: string;
  acquire: string;
  renew: string;
  release: string;
  deleteSession: string;
  deleteMessages: string;
  /** Retention: $1 idleBefore, $2 limit, $3/$4 cursor (activity key, id; '' for none). */
  deleteIdle: string;
  /** The page query; it asks for `limit + 1` rows to know whether another page exists. */
  list(filters: ListFilters): { text: string; values: unknown[] };
}

/** One append in two shapes: `$7` is one message's JSON (`one`), or a JSON array of them (`many`). */
export interface AppendStatements {
  one: string;
  many: string;
}

export interface ListFilters {
  limit: number;
  ownerId?: string;
  tenantId?: string;
  agentName?: string;
  cursor?: string;
}

const SESSION_COLUMNS =
  'id, agent_name, owner_id, tenant_id, state, head_seq, lease_holder, lease_epoch, lease_expires_at, created_at, updated_at, incarnation_id';

export function buildStatements(n: TableNames): Statements {
  /*
   * append: $1 session id, $2 expected seq, $3 lease holder (null: no lease), $4 lease epoch,
   * $5 new state JSON (null: keep), $6 release lease,
   * $7 the message's JSON (`one`) or the messages as one JSON array (`many`), $8 how many;
   * appendFirst adds $9-$13: init agent name, owner, tenant, state JSON, a new incarnation id. `updated_at` (and a new
   * session's `created_at`) is the server's clock, never the writer's: retention judges idleness by it.
   *
   * `advanced` moves the head of an existing session, guarded by head seq and the lease rule;
   * in appendFirst (expectedSeq 0), `created` makes the session when no row exists instead. Both
   * CTEs share one snapshot, so at most one of them yields a row; a concurrent writer makes the
   * guard re-check the newest row version (READ COMMITTED), and a concurrent creation makes
   * ON CONFLICT DO NOTHING yield none. Messages are inserted only when a head was granted, so a
   * failed guard writes nothing, and PRIMARY KEY (session_id, seq) backs the guard up.
   * `json_array_elements` on `json` (not jsonb) yields each element's text verbatim; one message
   * (what run() writes) is bound as text and needs no array at all.
   *
   * The statement ends in the INSERT itself, with no RETURNING: a granted append returns no row
   * to describe and parse, the floor's shape. Its WHERE is a one-time filter on one scalar
   * subquery (an InitPlan), evaluated once before any message row is made (plans.test.ts pins
   * this for every shape and plan): the granted head, or else the refusal function (migration 4),
   * which raises APPEND_REFUSED with the session's head and lease as THIS statement saw them, and
   * the server's clock ([head, holder, epoch, expiresAt, now]). The error is explained in the
   * same round trip and from the same snapshot that refused it (a later read could find the lease
   * released or the session re-created, and misname a fenced writer's refusal a seq conflict).
   * COALESCE evaluates the refusal only when no head was granted. A filter rather than a `verdict`
   * CTE joined to the messages: no CTE to materialise and scan, measured here ~30 µs (≈7%) cheaper
   * per append, paced as in a step.
   */
  const advanced = `advanced AS (
  UPDATE ${n.sessions} AS s SET
    head_seq = s.head_seq + $8::bigint,
    state = COALESCE($5::text, s.state),
    lease_holder = CASE WHEN $6::boolean THEN NULL ELSE s.lease_holder END,
    lease_expires_at = CASE WHEN $6::boolean THEN NULL ELSE s.lease_expires_at END,
    updated_at = ${SERVER_NOW}
  WHERE s.id = $1::text AND s.head_seq = $2::bigint
    AND CASE WHEN $3::text IS NULL THEN s.lease_holder IS NULL OR s.lease_expires_at <= ${SERVER_NOW}
             ELSE s.lease_holder = $3::text AND s.lease_epoch = $4::bigint END
  RETURNING s.head_seq
)`;
  const created = `created AS (
  INSERT INTO ${n.sessions} AS s (id, agent_name, owner_id, tenant_id, state, head_seq, lease_epoch, created_at, updated_at, incarnation_id)
  SELECT $1::text, $9::text, $10::text, $11::text, COALESCE($5::text, $12::text), $8::bigint, 0, ${SERVER_NOW}, ${SERVER_NOW}, $13::text
  WHERE $3::text IS NULL
  ON CONFLICT (id) DO NOTHING
  RETURNING s.head_seq
)`;
  const refusal = `${n.refuseAppend}($1::text, COALESCE((
    SELECT json_build_array(head_seq, lease_holder, lease_epoch, lease_expires_at, ${SERVER_NOW})::text
    FROM ${n.sessions} WHERE id = $1::text
  ), 'null'))`;
  const rows = {
    one: 'SELECT $1::text, $2::bigint + 1, $7::text',
    many: `SELECT $1::text, $2::bigint + m.ord, m.body::text
FROM json_array_elements($7::json) WITH ORDINALITY AS m(body, ord)`,
  };
  // `granted`: the CTEs that may yield the new head, in order. The decision is a scalar subquery
  // of its own (an InitPlan, evaluated once), so the filter on it is a one-time filter in both
  // shapes: written straight into WHERE, the call of the VOLATILE refusal function would make it
  // a per-row filter on the messages, and an empty array would then skip the refusal.
  const insertIfGranted = (ctes: string, granted: string[], shape: keyof AppendStatements) => `WITH ${ctes}
INSERT INTO ${n.messages} (session_id, seq, body)
${rows[shape]}
WHERE (SELECT COALESCE(${granted.map((cte) => `(SELECT head_seq FROM ${cte})`).join(', ')}, ${refusal})) IS NOT NULL`;
  const both = (ctes: string, granted: string[]): AppendStatements => ({
    one: insertIfGranted(ctes, granted, 'one'),
    many: insertIfGranted(ctes, granted, 'many'),
  });
  const append = both(advanced, ['advanced']);
  const appendFirst = both(`${created}, ${advanced}`, ['created', 'advanced']);

  /*
   * load: the session row (seq 0) and its messages after $2, from one snapshot, in no particular
   * order: the store puts each message in its slot by seq (seqs are contiguous), so the server
   * never sorts. A `UNION ALL ... ORDER BY` or an ordered window sorts, and for a long session
   * that sort spills to disk; an index-ordered plan is the planner's choice, not a guarantee.
   */
  const load = `SELECT 0::bigint AS seq, s.state AS body, s.agent_name, s.owner_id, s.tenant_id, s.head_seq,
  s.lease_holder, s.lease_epoch, s.lease_expires_at, s.created_at, s.updated_at, s.incarnation_id
FROM ${n.sessions} AS s WHERE s.id = $1::text
UNION ALL
SELECT m.seq, m.body, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM ${n.messages} AS m WHERE m.session_id = $1::text AND m.seq > $2::bigint`;

  /*
   * acquire: $1 id, $2-$5 init agent name, owner, tenant, state JSON, $6 holder, $7 ttl ms,
   * $8 a new incarnation id (kept only when this creates the session).
   * Creates the session with the lease, or takes the lease of an existing one when owner and
   * tenant match and the lease is free, expired (by the server's clock) or already this holder's;
   * the conflict row is locked and re-checked at its newest version. When refused, `prior` tells
   * denied from busy, and `server_now` lets the client compute retryAfterMs on the same clock.
   */
  const acquire = `WITH clock AS (
  SELECT ${SERVER_NOW} AS now_iso, ${serverIso('$7::bigint')} AS expires_iso
), prior AS (
  SELECT true AS found, owner_id, tenant_id, lease_holder, lease_expires_at FROM ${n.sessions} WHERE id = $1::text
), granted AS (
  INSERT INTO ${n.sessions} AS s (${SESSION_COLUMNS})
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, 0, $6::text, 1, c.expires_iso, c.now_iso, c.now_iso, $8::text
  FROM clock AS c
  ON CONFLICT (id) DO UPDATE SET
    lease_holder = EXCLUDED.lease_holder,
    lease_epoch = s.lease_epoch + 1,
    lease_expires_at = EXCLUDED.lease_expires_at
  WHERE s.owner_id IS NOT DISTINCT FROM EXCLUDED.owner_id
    AND s.tenant_id IS NOT DISTINCT FROM EXCLUDED.tenant_id
    AND (s.lease_holder IS NULL OR s.lease_expires_at <= (SELECT now_iso FROM clock)
         OR s.lease_holder = EXCLUDED.lease_holder)
  RETURNING s.*
)
SELECT g.*, p.found AS prior_found, p.owner_id AS prior_owner_id, p.tenant_id AS prior_tenant_id,
  p.lease_holder AS prior_lease_holder, p.lease_expires_at AS prior_lease_expires_at, c.now_iso AS server_now
FROM clock AS c
LEFT JOIN granted AS g ON true
LEFT JOIN prior AS p ON g.id IS NULL`;

  // renew: $1 id, $2 holder, $3 epoch, $4 ttl ms; the new expiry is the server's clock + ttl.
  const renew = `UPDATE ${n.sessions} SET lease_expires_at = ${serverIso('$4::bigint')}
WHERE id = $1::text AND lease_holder = $2::text AND lease_epoch = $3::bigint
RETURNING lease_expires_at`;

  // The epoch stays: the next grant must still be higher than every earlier one.
  const release = `UPDATE ${n.sessions} SET lease_holder = NULL, lease_expires_at = NULL
WHERE id = $1::text AND lease_holder = $2::text AND lease_epoch = $3::bigint`;

  const deleteSession = `DELETE FROM ${n.sessions} WHERE id = $1::text`;
  const deleteMessages = `DELETE FROM ${n.messages} WHERE session_id = $1::text`;

  /*
   * deleteIdle, one statement: a page of candidates from the activity index, then the idle ones
   * (updated_at before $1, lease free or expired) deleted with their messages, and the active
   * ones' index key moved up to updated_at (out of this and every later sweep's range until they
   * go idle again). A concurrent append locks the row first or makes the DELETE re-check the
   * newest row version (READ COMMITTED), which is then no longer idle: never half a session.
   * `= ANY (ARRAY(...))` keeps every step an index lookup (a join with the CTE can plan a scan).
   */
  const idleKey = 'COALESCE(idle_at, created_at)';
  const deleteIdle = `WITH candidates AS (
  SELECT id, ${idleKey} AS idle_key FROM ${n.sessions}
  WHERE ${idleKey} < $1::text AND (${idleKey}, id) > ($3::text, $4::text)
  ORDER BY ${idleKey}, id
  LIMIT $2::bigint
), gone AS (
  DELETE FROM ${n.sessions} AS s
  WHERE s.id = ANY (ARRAY(SELECT id FROM candidates)) AND s.updated_at < $1::text
    AND (s.lease_holder IS NULL OR s.lease_expires_at <= ${SERVER_NOW})
  RETURNING s.id
), purged AS (
  DELETE FROM ${n.messages} WHERE session_id = ANY (ARRAY(SELECT id FROM gone))
), rescored AS (
  UPDATE ${n.sessions} AS s SET idle_at = s.updated_at
  WHERE s.id = ANY (ARRAY(SELECT id FROM candidates)) AND s.updated_at >= $1::text
)
SELECT (SELECT COALESCE(json_agg(id), '[]')::text FROM gone) AS deleted,
  (SELECT count(*) FROM candidates) AS examined,
  (SELECT json_build_array(idle_key, id)::text FROM candidates ORDER BY idle_key DESC, id DESC LIMIT 1) AS last`;

  /*
   * One statement text per filter combination. The first filter given (owner, then tenant, then
   * agent name) drives the scan: its equality is written as a range, `col >= $v AND col <= $v`
   * (the same rows under COLLATE "C"), and the page is ordered by (col, id), an order only that
   * filter's (col, id) index delivers. Plain `col = $v ... ORDER BY id` lets the planner walk the
   * primary key instead and filter, which a generic plan does for every value, reading the
   * whole table to find a rare or absent one. The cursor is a row comparison, so the scan starts
   * at the cursor instead of skipping every earlier entry. Further filters are checked on the
   * rows the driving index yields.
   */
  const list = (filters: ListFilters) => {
    const values: unknown[] = [filters.limit + 1];
    const param = (value: string) => {
      values.push(value);
      return `$${values.length}::text`;
    };
    const given: [string, string][] = [];
    if (filters.ownerId !== undefined) given.push(['owner_id', filters.ownerId]);
    if (filters.tenantId !== undefined) given.push(['tenant_id', filters.tenantId]);
    if (filters.agentName !== undefined) given.push(['agent_name', filters.agentName]);
    const where: string[] = [];
    let order = 'id';
    const [driving, ...others] = given;
    if (others.length > 0) {
      // Two or three filters: equality on every one, served by that combination's
      // (filters…, id) index, which hands back rows already in id order.
      for (const [column, value] of given) where.push(`${column} = ${param(value)}`);
      if (filters.cursor !== undefined) where.push(`id > ${param(filters.cursor)}`);
    } else if (driving) {
      const [column, value] = driving;
      const v = param(value);
      if (filters.cursor === undefined) where.push(`${column} >= ${v}`);
      else where.push(`(${column}, id) > (${v}, ${param(filters.cursor)})`);
      where.push(`${column} <= ${v}`);
      order = `${column}, id`;
    } else if (filters.cursor !== undefined) {
      where.push(`id > ${param(filters.cursor)}`);
    }
    const text = `SELECT ${SESSION_COLUMNS} FROM ${n.sessions}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}
ORDER BY ${order} LIMIT $1::bigint`;
    return { text, values };
  };

  return {
    append,
    appendFirst,
    load,
    acquire,
    renew,
    release,
    deleteSession,
    deleteMessages,
    deleteIdle,
    list,
  };
}
