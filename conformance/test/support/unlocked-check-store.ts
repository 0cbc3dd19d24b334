import type { AgentStore } from '@agentstore/core';
import { LeaseLostError, SeqConflictError } from '@agentstore/core';
import {
  appendLeaseMatches,
  leaseFromColumns,
  snapshotInput,
  validateAppendInput,
} from '@agentstore/core/store';
import { nodeSqliteTarget } from '../../../docs/examples/custom-store/conformance-target.ts';
import { nodeSqliteStore, openDatabase } from '../../../docs/examples/custom-store/node-sqlite-store.ts';
import type { CheckContext } from '../../src/index.ts';

/**
 * The example store with the mistake of a new user (issue 28): `append` reads the head and the
 * lease in one request and writes in a transaction of its own a round trip later, trusting what
 * it read — as a MariaDB or Postgres store does with the check outside the transaction, or inside
 * a READ COMMITTED one without `SELECT … FOR UPDATE`. Two racing appends read the same head and
 * both insert; the primary key on (session_id, seq) refuses the second with the driver's raw
 * "UNIQUE constraint failed" error instead of a SeqConflictError.
 */
export function unlockedCheckStore(path: string): AgentStore {
  const correct = nodeSqliteStore({ path });
  const db = openDatabase(path);
  const row = db.prepare('SELECT * FROM agent_sessions WHERE id = ?');
  const clock = db.prepare("SELECT CAST(round(unixepoch('now', 'subsec') * 1000) AS INTEGER) AS now");
  const insert = db.prepare(
    'INSERT INTO agent_messages (session_id, seq, id, role, content, meta) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const create = db.prepare(
    `INSERT OR IGNORE INTO agent_sessions (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 0, ?, ?)`,
  );
  const advance = db.prepare(
    'UPDATE agent_sessions SET head_seq = ?, state = coalesce(?, state), updated_at = ? WHERE id = ?',
  );
  return {
    ...correct,
    async append(sessionId, given) {
      const input = snapshotInput(given);
      validateAppendInput(sessionId, input, correct.limits);
      const now = Number((clock.get() as { now: number | bigint }).now);
      const found = row.get(sessionId) as
        | {
            head_seq: number;
            lease_holder: string | null;
            lease_epoch: number;
            lease_expires_at: string | null;
          }
        | undefined;
      const lease = found
        ? leaseFromColumns(sessionId, found.lease_holder, found.lease_epoch, found.lease_expires_at)
        : null;
      if (!appendLeaseMatches(lease, input.lease, now)) {
        throw new LeaseLostError({
          sessionId,
          holder: input.lease?.holder ?? null,
          epoch: input.lease?.epoch ?? null,
        });
      }
      const head = found?.head_seq ?? 0;
      if (head !== input.expectedSeq) {
        throw new SeqConflictError({ sessionId, expectedSeq: input.expectedSeq, actualSeq: head });
      }
      // The round trip between the check and the write: another append lands here.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const iso = new Date(now).toISOString();
      db.exec('BEGIN IMMEDIATE');
      try {
        const init = input.session?.init;
        create.run(
          sessionId,
          init?.agentName ?? '',
          init?.ownerId ?? null,
          init?.tenantId ?? null,
          JSON.stringify(init?.state ?? null),
          iso,
          iso,
        );
        input.messages.forEach(({ id, role, content, ...meta }, i) => {
          insert.run(sessionId, head + i + 1, id, role, content, JSON.stringify(meta));
        });
        const state = input.session?.state === undefined ? null : JSON.stringify(input.session.state);
        advance.run(head + input.messages.length, state, iso, sessionId);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
      return { headSeq: head + input.messages.length };
    },
    async close() {
      db.close();
      await correct.close();
    },
  };
}

/** A check context on a fresh database file: this store, or the correct example without `unlocked`. */
export async function unlockedCheckContext(unlocked: boolean): Promise<CheckContext> {
  const target = nodeSqliteTarget();
  const store = unlocked ? unlockedCheckStore(String(target.reopen?.path)) : await target.createStore();
  return { store, target, capabilities: target.capabilities ?? {} };
}
