import { type AgentStore, LeaseLostError, SeqConflictError } from '@agentstore/core';
import { appendLeaseMatches, leaseFromColumns, validateAppendInput } from '@agentstore/core/store';
import { nodeSqliteTarget } from '../../../docs/examples/custom-store/conformance-target.ts';
import { nodeSqliteStore, openDatabase } from '../../../docs/examples/custom-store/node-sqlite-store.ts';
import type { ConformanceTarget } from '../../src/index.ts';

/**
 * The mistakes of a real custom store on a real database (a node:sqlite file), each a complete
 * store that passes every sequential check:
 * - `split-null` / `split-head`: validates, checks the head, inserts the messages in one
 *   autocommit statement and moves the head in a second one (a round trip later), as a MariaDB
 *   store with two awaited statements would. A conflict on the message insert reports
 *   `actualSeq: null` or the head it reads then (which is still `expectedSeq`).
 * - `no-seq-check`: one transaction, but appends after whatever head it finds.
 * - `no-snapshot`: one guarded transaction, but it validates the caller's live objects and then
 *   reads them again to serialise them (no `snapshotInput`), as every flaw here does; alone, that
 *   is its only mistake.
 */
export type SplitFlaw = 'split-null' | 'split-head' | 'no-seq-check' | 'no-snapshot';

const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Row {
  id: string;
  head_seq: number;
  lease_holder: string | null;
  lease_epoch: number;
  lease_expires_at: string | null;
}

export function splitStore(path: string, flaw: SplitFlaw): AgentStore {
  const correct = nodeSqliteStore({ path });
  const db = openDatabase(path);
  const sessionRow = db.prepare('SELECT * FROM agent_sessions WHERE id = ?');
  const insertSession = db.prepare(
    `INSERT INTO agent_sessions (id, agent_name, owner_id, tenant_id, state, head_seq, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const moveHead = db.prepare(
    'UPDATE agent_sessions SET head_seq = ?, state = coalesce(?, state), updated_at = ? WHERE id = ? AND head_seq = ?',
  );
  const insertMessages = (rows: number) =>
    db.prepare(
      `INSERT INTO agent_messages (session_id, seq, id, role, content, meta) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    );

  return {
    ...correct,
    async append(sessionId, input) {
      validateAppendInput(sessionId, input, correct.limits);
      const now = Date.now();
      const iso = new Date(now).toISOString();
      const row = sessionRow.get(sessionId) as Row | undefined;
      const head = row?.head_seq ?? 0;
      const expectedSeq = flaw === 'no-seq-check' ? head : input.expectedSeq;
      const conflict = () =>
        new SeqConflictError({
          sessionId,
          expectedSeq: input.expectedSeq,
          actualSeq:
            flaw === 'split-null' ? null : ((sessionRow.get(sessionId) as Row | undefined)?.head_seq ?? 0),
        });
      if (head !== expectedSeq) throw conflict();
      const lease = row
        ? leaseFromColumns(row.id, row.lease_holder, row.lease_epoch, row.lease_expires_at)
        : null;
      if (!appendLeaseMatches(lease, input.lease, now)) {
        throw new LeaseLostError({
          sessionId,
          holder: input.lease?.holder ?? null,
          epoch: input.lease?.epoch ?? null,
        });
      }
      const values = input.messages.flatMap(({ id, role, content, ...meta }, i) => [
        sessionId,
        expectedSeq + i + 1,
        id,
        role,
        content,
        JSON.stringify(meta),
      ]);
      const newHead = expectedSeq + input.messages.length;
      const state = input.session?.state === undefined ? null : JSON.stringify(input.session.state);
      const init = input.session?.init;
      const writeHead = () => {
        if (row) {
          if (moveHead.run(newHead, state, iso, sessionId, expectedSeq).changes !== 1) throw conflict();
        } else {
          insertSession.run(
            sessionId,
            init?.agentName ?? '',
            init?.ownerId ?? null,
            init?.tenantId ?? null,
            state ?? JSON.stringify(init?.state ?? null),
            newHead,
            iso,
            iso,
          );
        }
      };
      if (flaw === 'no-seq-check' || flaw === 'no-snapshot') {
        // Atomic; with no-seq-check guarded by nothing, so concurrent writers all commit.
        db.exec('BEGIN IMMEDIATE');
        try {
          insertMessages(input.messages.length).run(...values);
          writeHead();
          db.exec('COMMIT');
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
        return { headSeq: newHead };
      }
      try {
        insertMessages(input.messages.length).run(...values);
      } catch (error) {
        if ((error as { errcode?: number }).errcode === 1555) throw conflict(); // SQLITE_CONSTRAINT_PRIMARYKEY
        throw error;
      }
      // The second statement, one round trip later: the window a crash or a reader falls into.
      await roundTrip();
      try {
        writeHead();
      } catch (error) {
        if ((error as { errcode?: number }).errcode === 1555) throw conflict();
        throw error;
      }
      return { headSeq: newHead };
    },
    async close() {
      db.close();
      await correct.close();
    },
  };
}

/** The broken store as a conformance target on a node:sqlite file, reopenable by child processes. */
export function splitTarget(options: { path?: string; flaw: SplitFlaw }): ConformanceTarget {
  const base = nodeSqliteTarget(options.path ? { path: options.path } : {});
  const path = String(base.reopen?.path);
  return {
    ...base,
    name: `broken store (${options.flaw})`,
    reopen: { path, flaw: options.flaw },
    createStore: () => splitStore(path, options.flaw),
  };
}
