import { describe, expect, it } from 'vitest';
import {
  appendLoadSpec,
  atomicitySpec,
  type CheckContext,
  type ConformanceCheck,
  ConformanceViolation,
  concurrencySpec,
  corruptRecordSpec,
  crashMatrixSpec,
  hostileIdSpec,
  isolationSpec,
  leaseFaultSpec,
  leaseSpec,
  longSessionSpec,
  perfGateSpec,
  retentionSpec,
} from '../src/index.ts';
import { type Flaws, tableStore } from './support/table-store.ts';

function contextFor(flaws: Flaws, roundTripUs = 0): CheckContext {
  const { store, capabilities, roundTrips } = tableStore({ flaws, roundTripUs });
  const target = { name: 'broken', createStore: () => store, capabilities, roundTrips };
  return { store, capabilities, target };
}

function check(checks: readonly ConformanceCheck[], name: string): ConformanceCheck {
  const found = checks.find((c) => c.name.startsWith(name));
  if (!found) throw new Error(`no check named ${JSON.stringify(name)}`);
  return found;
}

/** The kit must report the bug as a violation, not pass and not crash on it. */
async function expectViolation(ctx: CheckContext, checks: readonly ConformanceCheck[], name: string) {
  await expect(check(checks, name).run(ctx)).rejects.toBeInstanceOf(ConformanceViolation);
}

describe('the kit catches broken stores', () => {
  it('a non-atomic append that fails midway leaves partial writes', async () => {
    const ctx = contextFor({ nonAtomic: true });
    await expectViolation(
      ctx,
      atomicitySpec.checks,
      'an over-limit message as the last of five writes nothing (existing',
    );
    await expectViolation(
      ctx,
      atomicitySpec.checks,
      'an over-limit message as the last of five creates no session',
    );
  });

  it('rows inserted outside the guarded write are caught through the raw reader, though load looks clean', async () => {
    const ctx = contextFor({ leavesOrphanRows: true });
    await expectViolation(ctx, atomicitySpec.checks, 'a seq conflict writes nothing');
    await expectViolation(ctx, atomicitySpec.checks, 'a lease mismatch writes nothing');
    // Without a raw reader the same bug hides behind `load`: this is what the raw capability is for.
    await expect(
      check(atomicitySpec.checks, 'a seq conflict writes nothing').run({ ...ctx, capabilities: {} }),
    ).resolves.toBeUndefined();
  });

  it('no seq check: concurrent writers all commit', async () => {
    const ctx = contextFor({ noSeqCheck: true });
    await expectViolation(ctx, concurrencySpec.checks, 'of 8 concurrent appends with the same expectedSeq');
    await expectViolation(ctx, concurrencySpec.checks, 'of 8 concurrent first appends');
    await expectViolation(ctx, atomicitySpec.checks, 'a seq conflict writes nothing');
  });

  it('a lease check that ignores the epoch lets a fenced writer append', async () => {
    const ctx = contextFor({ ignoresEpoch: true });
    await expectViolation(ctx, leaseSpec.checks, 're-acquire by the same holder bumps the epoch and fences');
    await expectViolation(ctx, atomicitySpec.checks, 'a lease mismatch writes nothing');
  });

  it('a store that judges lease expiry by its caller’s clock lets a skewed client take a live lease', async () => {
    const ctx = contextFor({ trustsClientClock: true });
    await expectViolation(
      ctx,
      leaseSpec.checks,
      'a client whose clock is wrong can neither take a live lease',
    );
    // The same store is fine while every clock is right: only the skewed-clock check sees it.
    await expect(
      check(leaseSpec.checks, 'another holder gets SessionBusyError').run(ctx),
    ).resolves.toBeUndefined();
  });

  it('a store that checks the seq before the lease tells a fenced writer "seq conflict"', async () => {
    const ctx = contextFor({ seqBeforeLease: true });
    await expectViolation(
      ctx,
      leaseSpec.checks,
      'a fenced writer gets LeaseLostError, never SeqConflictError',
    );
  });

  it('a store whose lease lapses early lets a successor fire while the partitioned holder still runs', async () => {
    const ctx = contextFor({ shortensLease: true });
    await expectViolation(ctx, leaseFaultSpec.checks, 'a holder whose renewals hang (partitioned)');
    await expectViolation(ctx, leaseFaultSpec.checks, 'a holder whose renewals fail');
  }, 30_000);

  it('dropping the last message of an append', async () => {
    const ctx = contextFor({ dropsLast: true });
    await expectViolation(ctx, appendLoadSpec.checks, 'tool calls with nested JSON input round-trip');
    await expectViolation(ctx, appendLoadSpec.checks, 'a 1,000-message session');
    await expectViolation(ctx, appendLoadSpec.checks, 'append returns the new headSeq');
    await expect(check(crashMatrixSpec.checks, 'crash matrix: a clean run').run(ctx)).rejects.toThrow();
  });

  it('reordering the messages of an append', async () => {
    const ctx = contextFor({ reorders: true });
    await expectViolation(ctx, appendLoadSpec.checks, 'unicode and empty content round-trip exactly');
    await expectViolation(ctx, appendLoadSpec.checks, 'a 1,000-message session');
  });

  it('skipping an undecodable row instead of reporting it', async () => {
    await expectViolation(
      contextFor({ skipsCorrupt: true }),
      corruptRecordSpec.checks,
      'load of a session with an undecodable',
    );
  });

  it('ignoring afterSeq, which also breaks settling a lost acknowledgement', async () => {
    const ctx = contextFor({ ignoresAfterSeq: true });
    await expectViolation(ctx, appendLoadSpec.checks, 'afterSeq returns only the messages after it');
    await expectViolation(ctx, crashMatrixSpec.checks, 'crash matrix: an acknowledgement lost at any append');
  });

  it('listSessions without the tenant filter', async () => {
    const ctx = contextFor({ ignoresTenantFilter: true });
    await expectViolation(ctx, isolationSpec.checks, 'listSessions filters by tenant');
    await expectViolation(ctx, isolationSpec.checks, 'listSessions pages with a cursor');
  });

  it('listSessions in JavaScript order, not code point order', async () => {
    const ctx = contextFor({ ordersByUtf16: true });
    await expectViolation(ctx, isolationSpec.checks, 'listSessions orders ids by code point');
  });

  it('keys built from "sanitized" ids collide', async () => {
    const ctx = contextFor({ sanitizesIds: true });
    await expectViolation(ctx, hostileIdSpec.checks, 'ids that differ only in special characters');
  });

  it('a store that makes five round trips per append fails the perf gate, by count, not by time', async () => {
    const ctx = contextFor({ chatty: true });
    await expectViolation(ctx, perfGateSpec.checks, 'perf gate: every append of a run()');
    // The same check passes the correct store.
    await expect(
      check(perfGateSpec.checks, 'perf gate: every append of a run()').run(contextFor({})),
    ).resolves.toBeUndefined();
  });

  it('retention that deletes a session holding a live lease', async () => {
    const ctx = contextFor({ retentionIgnoresLease: true });
    await expectViolation(ctx, retentionSpec.checks, 'deleteIdleSessions removes idle sessions whole');
  });

  it('retention that leaves the session row behind its deleted messages', async () => {
    const ctx = contextFor({ retentionLeavesSession: true });
    await expectViolation(ctx, retentionSpec.checks, 'deleteIdleSessions removes idle sessions whole');
  });

  it('a long session loaded out of order', async () => {
    const { store, capabilities } = tableStore({ flaws: { reorders: true } });
    const target = { name: 'broken', createStore: () => store, capabilities, longSessionMessages: 2_000 };
    await expectViolation(
      { store, capabilities, target },
      longSessionSpec.checks,
      'a long session loads whole',
    );
  });
});
