import type { AgentStore } from '@agentstore/core';
import { LeaseLostError } from '@agentstore/core';
import { expiryIso, validateReleaseLeaseInput, validateRenewLeaseInput } from '@agentstore/core/store';
import { nodeSqliteTarget } from '../../../docs/examples/custom-store/conformance-target.ts';
import { nodeSqliteStore, openDatabase } from '../../../docs/examples/custom-store/node-sqlite-store.ts';
import type { CheckContext } from '../../src/index.ts';

/**
 * The example store with one mistake: renewLease and releaseLease match the holder in SQL under a
 * loose collation — `RTRIM` ignores trailing spaces as MariaDB's PAD SPACE collations
 * (`utf8mb4_bin` included) do, `NOCASE` ignores case as a `_ci` collation does.
 */
export function looseHolderStore(path: string, collation: 'RTRIM' | 'NOCASE'): AgentStore {
  const correct = nodeSqliteStore({ path });
  const db = openDatabase(path);
  const clock = db.prepare("SELECT CAST(round(unixepoch('now', 'subsec') * 1000) AS INTEGER) AS now");
  const renew = db.prepare(
    `UPDATE agent_sessions SET lease_expires_at = ?
     WHERE id = ? AND lease_holder = ? COLLATE ${collation} AND lease_epoch = ?`,
  );
  const release = db.prepare(
    `UPDATE agent_sessions SET lease_holder = NULL, lease_expires_at = NULL
     WHERE id = ? AND lease_holder = ? COLLATE ${collation} AND lease_epoch = ?`,
  );
  return {
    ...correct,
    async renewLease(sessionId, { holder, epoch, ttlMs }) {
      validateRenewLeaseInput(sessionId, { holder, epoch, ttlMs });
      const expiresAt = expiryIso(Number((clock.get() as { now: number | bigint }).now), ttlMs);
      if (renew.run(expiresAt, sessionId, holder, epoch).changes !== 1) {
        throw new LeaseLostError({ sessionId, holder, epoch });
      }
      return { expiresAt };
    },
    async releaseLease(sessionId, { holder, epoch }) {
      validateReleaseLeaseInput(sessionId, { holder, epoch });
      return { released: release.run(sessionId, holder, epoch).changes === 1 };
    },
    async close() {
      db.close();
      await correct.close();
    },
  };
}

/** A check context on a fresh database file: the loose store, or the correct example when `collation` is absent. */
export async function looseHolderContext(collation?: 'RTRIM' | 'NOCASE'): Promise<CheckContext> {
  const target = nodeSqliteTarget();
  const path = String(target.reopen?.path);
  const store = collation ? looseHolderStore(path, collation) : await target.createStore();
  return { store, target, capabilities: target.capabilities ?? {} };
}
