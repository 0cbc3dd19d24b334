// examples/src/docs/server-target.ts
import type { OpenTestTarget, RawMessageRow, RawSessionRow } from '@agentstore/conformance';
import { postgresStore } from '@agentstore/postgres'; // stands in for your own store's factory
import pg from 'pg';

export default async function target(options: { url?: string } = {}): Promise<OpenTestTarget> {
  const url = options.url ?? process.env.DATABASE_URL ?? 'postgres://localhost/test';
  const pool = new pg.Pool({ connectionString: url, max: 2 }); // the raw reader's own connections
  return {
    name: 'my server-backed store',
    module: import.meta.url,
    // Child processes (process tier, torture) open the same database with these options.
    reopen: { url },
    createStore: () => postgresStore({ connectionString: url }),
    capabilities: {
      raw: {
        async session(id) {
          const { rows } = await pool.query<RawSessionRow>(
            'SELECT id, head_seq AS "headSeq", owner_id AS "ownerId", tenant_id AS "tenantId", lease_holder AS "leaseHolder", lease_epoch AS "leaseEpoch" FROM sessions WHERE id = $1',
            [id],
          );
          return rows[0] ?? null;
        },
        async messages(id) {
          const { rows } = await pool.query<RawMessageRow>(
            'SELECT seq, id, role, content FROM messages WHERE session_id = $1 ORDER BY seq',
            [id],
          );
          return rows;
        },
      },
    },
    describe: async () => `my store on ${new URL(url).host}`,
    // Ends what the target opened besides its stores; the kit, torture and bench call it when done.
    close: () => pool.end(),
  };
}
