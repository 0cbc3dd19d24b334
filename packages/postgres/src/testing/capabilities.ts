import type { StoreCapabilities } from '@agentstore/core/testing';
import type { Pool } from 'pg';
import { tableNames } from '../schema.ts';

/**
 * What the conformance kit and the bench need beyond the store: a raw reader (plain SQL), a
 * corrupter and the floor — the cheapest correct append a user would hand-write with pg.
 */
export function postgresCapabilities(
  getPool: () => Pool,
  schema: string,
  options: { tablePrefix?: string; preparedStatements?: boolean } = {},
): Required<StoreCapabilities> {
  const { tablePrefix = 'agentstore_', preparedStatements = true } = options;
  const t = tableNames(schema, tablePrefix);
  // Looked up per call, so the capabilities can be declared before the server is up.
  const pool = { query: ((...args: Parameters<Pool['query']>) => getPool().query(...args)) as Pool['query'] };
  // One prepared statement: bump the head only if it is still expectedSeq, insert the rows from it.
  const floorSql = `WITH bumped AS (
  UPDATE ${t.sessions} SET head_seq = $2::bigint + $4::bigint, updated_at = $5::text
  WHERE id = $1::text AND head_seq = $2::bigint
  RETURNING id
)
INSERT INTO ${t.messages} (session_id, seq, body)
SELECT bumped.id, $2::bigint + m.ord, m.body FROM bumped, unnest($3::text[]) WITH ORDINALITY AS m(body, ord)`;

  return {
    raw: {
      async session(sessionId) {
        const { rows } = await pool.query(
          `SELECT id, head_seq, owner_id, tenant_id, lease_holder, lease_epoch FROM ${t.sessions} WHERE id = $1`,
          [sessionId],
        );
        const row = rows[0];
        if (!row) return null;
        return {
          id: row.id,
          headSeq: Number(row.head_seq),
          ownerId: row.owner_id,
          tenantId: row.tenant_id,
          leaseHolder: row.lease_holder,
          leaseEpoch: Number(row.lease_epoch),
        };
      },
      async messages(sessionId) {
        const { rows } = await pool.query<{ seq: string; body: string }>(
          `SELECT seq, body FROM ${t.messages} WHERE session_id = $1 ORDER BY seq`,
          [sessionId],
        );
        return rows.map((row) => {
          const body = JSON.parse(row.body) as { id: string; role: string; content: string };
          return { seq: Number(row.seq), id: body.id, role: body.role, content: body.content };
        });
      },
    },
    async corrupt(sessionId, seq) {
      const result = await pool.query(
        `UPDATE ${t.messages} SET body = '{"id": "half a record' WHERE session_id = $1 AND seq = $2`,
        [sessionId, seq],
      );
      if (result.rowCount !== 1) throw new Error(`no stored message at seq ${seq} of ${sessionId}`);
    },
    floor: {
      async append(sessionId, expectedSeq, messages) {
        const bodies = messages.map(({ seq: _seq, ...message }) => JSON.stringify(message));
        const values = [sessionId, expectedSeq, bodies, messages.length, new Date().toISOString()];
        // Behind a transaction-mode pooler a user could not prepare either: compare like with like.
        const result = await pool.query(
          preparedStatements
            ? { name: `floor_${schema}`, text: floorSql, values }
            : { text: floorSql, values },
        );
        if (result.rowCount !== messages.length)
          throw new Error(`floor append refused at seq ${expectedSeq}`);
      },
    },
  };
}
