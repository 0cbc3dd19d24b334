// The module `agentstore-conformance` runs: it default-exports a function returning a
// ConformanceTarget. Called without options it makes a fresh database file; the kit's process
// tier calls it again in child processes with `reopen` ({ path }), so they open the same file.
//   npx agentstore-conformance conformance-target.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConformanceTarget } from '@agentstore/conformance';
import { nodeSqliteStore, openDatabase } from './node-sqlite-store.ts';

const utf8 = new TextDecoder();

/** A fresh database file, removed when the process that made it exits. */
function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-custom-store-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'agent.db');
}

export function nodeSqliteTarget(options: { path?: string } = {}): ConformanceTarget {
  const path = options.path ?? freshPath();
  // A second connection that reads and writes the tables directly, bypassing the store: the kit
  // checks the store's writes through it, so a bad write cannot hide behind a matching bad read.
  const raw = openDatabase(path);
  return {
    name: 'node:sqlite custom store',
    // Another process opens the same file with these options (the kit's process tier does).
    reopen: { path },
    // Called once per spec file; every store shares the one database file.
    createStore: () => nodeSqliteStore({ path }),
    capabilities: {
      raw: {
        async session(sessionId) {
          const row = raw
            .prepare(
              'SELECT id, head_seq, owner_id, tenant_id, lease_holder, lease_epoch FROM agent_sessions WHERE id = ?',
            )
            .get(sessionId) as
            | {
                id: string;
                head_seq: number;
                owner_id: string | null;
                tenant_id: string | null;
                lease_holder: string | null;
                lease_epoch: number;
              }
            | undefined;
          return row
            ? {
                id: row.id,
                headSeq: row.head_seq,
                ownerId: row.owner_id,
                tenantId: row.tenant_id,
                leaseHolder: row.lease_holder,
                leaseEpoch: row.lease_epoch,
              }
            : null;
        },
        async messages(sessionId) {
          // Id and content as bytes: node:sqlite reads a TEXT value only up to its first U+0000.
          const rows = raw
            .prepare(
              'SELECT seq, CAST(id AS BLOB) AS id, role, CAST(content AS BLOB) AS content FROM agent_messages WHERE session_id = ? ORDER BY seq',
            )
            .all(sessionId) as unknown as {
            seq: number;
            id: Uint8Array;
            role: string;
            content: Uint8Array;
          }[];
          return rows.map((row) => ({ ...row, id: utf8.decode(row.id), content: utf8.decode(row.content) }));
        },
      },
      // Bytes the store cannot decode, at one seq: load must report them, not skip them.
      async corrupt(sessionId, seq) {
        raw
          .prepare("UPDATE agent_messages SET meta = '{truncated' WHERE session_id = ? AND seq = ?")
          .run(sessionId, seq);
      },
      // The cheapest correct append by hand, for the perf gate: one guarded update plus inserts, one transaction.
      floor: {
        async append(sessionId, expectedSeq, messages) {
          raw.exec('BEGIN IMMEDIATE');
          try {
            const guarded = raw
              .prepare('UPDATE agent_sessions SET head_seq = ?, updated_at = ? WHERE id = ? AND head_seq = ?')
              .run(expectedSeq + messages.length, new Date().toISOString(), sessionId, expectedSeq);
            if (guarded.changes !== 1) throw new Error('floor: head moved');
            const insert = raw.prepare(
              'INSERT INTO agent_messages (session_id, seq, id, role, content, meta) VALUES (?, ?, ?, ?, ?, ?)',
            );
            for (const { seq, id, role, content, ...meta } of messages) {
              insert.run(sessionId, seq, id, role, content, JSON.stringify(meta));
            }
            raw.exec('COMMIT');
          } catch (error) {
            raw.exec('ROLLBACK');
            throw error;
          }
        },
      },
    },
  };
}

export default nodeSqliteTarget;
