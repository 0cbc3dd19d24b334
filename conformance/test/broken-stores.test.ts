import { describe, expect, it } from 'vitest';
import {
  appendLoadChecks,
  atomicityChecks,
  type CheckContext,
  type ConformanceCheck,
  ConformanceViolation,
  concurrencyChecks,
  corruptRecordChecks,
  crashMatrixChecks,
  hostileIdChecks,
  isolationChecks,
  leaseChecks,
  perfGateChecks,
} from '../src/index.ts';
import { type Flaws, tableStore } from './support/table-store.ts';

function contextFor(flaws: Flaws, roundTripUs = 0): CheckContext {
  const { store, capabilities } = tableStore({ flaws, roundTripUs });
  return { store, capabilities, target: { name: 'broken', createStore: () => store, capabilities } };
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
      atomicityChecks,
      'an over-limit message as the last of five writes nothing (existing',
    );
    await expectViolation(
      ctx,
      atomicityChecks,
      'an over-limit message as the last of five creates no session',
    );
  });

  it('rows inserted outside the guarded write are caught through the raw reader, though load looks clean', async () => {
    const ctx = contextFor({ leavesOrphanRows: true });
    await expectViolation(ctx, atomicityChecks, 'a seq conflict writes nothing');
    await expectViolation(ctx, atomicityChecks, 'a lease mismatch writes nothing');
    // Without a raw reader the same bug hides behind `load`: this is what the raw capability is for.
    await expect(
      check(atomicityChecks, 'a seq conflict writes nothing').run({ ...ctx, capabilities: {} }),
    ).resolves.toBeUndefined();
  });

  it('no seq check: concurrent writers all commit', async () => {
    const ctx = contextFor({ noSeqCheck: true });
    await expectViolation(ctx, concurrencyChecks, 'of 8 concurrent appends with the same expectedSeq');
    await expectViolation(ctx, concurrencyChecks, 'of 8 concurrent first appends');
    await expectViolation(ctx, atomicityChecks, 'a seq conflict writes nothing');
  });

  it('a lease check that ignores the epoch lets a fenced writer append', async () => {
    const ctx = contextFor({ ignoresEpoch: true });
    await expectViolation(ctx, leaseChecks, 're-acquire by the same holder bumps the epoch and fences');
    await expectViolation(ctx, atomicityChecks, 'a lease mismatch writes nothing');
  });

  it('dropping the last message of an append', async () => {
    const ctx = contextFor({ dropsLast: true });
    await expectViolation(ctx, appendLoadChecks, 'tool calls with nested JSON input round-trip');
    await expectViolation(ctx, appendLoadChecks, 'a 1,000-message session');
    await expectViolation(ctx, appendLoadChecks, 'append returns the new headSeq');
    await expect(check(crashMatrixChecks, 'crash matrix: a clean run').run(ctx)).rejects.toThrow();
  });

  it('reordering the messages of an append', async () => {
    const ctx = contextFor({ reorders: true });
    await expectViolation(ctx, appendLoadChecks, 'unicode and empty content round-trip exactly');
    await expectViolation(ctx, appendLoadChecks, 'a 1,000-message session');
  });

  it('skipping an undecodable row instead of reporting it', async () => {
    await expectViolation(
      contextFor({ skipsCorrupt: true }),
      corruptRecordChecks,
      'load of a session with an undecodable',
    );
  });

  it('ignoring afterSeq, which also breaks settling a lost acknowledgement', async () => {
    const ctx = contextFor({ ignoresAfterSeq: true });
    await expectViolation(ctx, appendLoadChecks, 'afterSeq returns only the messages after it');
    await expectViolation(ctx, crashMatrixChecks, 'crash matrix: an acknowledgement lost at any append');
  });

  it('listSessions without the tenant filter', async () => {
    const ctx = contextFor({ ignoresTenantFilter: true });
    await expectViolation(ctx, isolationChecks, 'listSessions filters by tenant');
    await expectViolation(ctx, isolationChecks, 'listSessions pages with a cursor');
  });

  it('keys built from "sanitized" ids collide', async () => {
    const ctx = contextFor({ sanitizesIds: true });
    await expectViolation(ctx, hostileIdChecks, 'ids that differ only in special characters');
  });

  it('a store that makes five round trips per append fails the perf gate, by count, not by time', async () => {
    const ctx = contextFor({ chatty: true });
    await expectViolation(ctx, perfGateChecks, 'perf gate: every append of a run()');
    // The same check passes the correct store.
    await expect(
      check(perfGateChecks, 'perf gate: every append of a run()').run(contextFor({})),
    ).resolves.toBeUndefined();
  });
});
