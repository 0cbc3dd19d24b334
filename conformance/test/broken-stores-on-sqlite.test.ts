import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appendLoadSpec,
  atomicityObservedSpec,
  atomicitySpec,
  type CheckContext,
  type ConformanceCheck,
  ConformanceViolation,
  concurrencySpec,
  inputValidationSpec,
  isolationSpec,
  leaseSpec,
  openTargetModule,
  processTierSpec,
  retentionSpec,
} from '../src/index.ts';
import { type SplitFlaw, splitTarget } from './support/split-store.ts';

function check(checks: readonly ConformanceCheck[], name: string): ConformanceCheck {
  const found = checks.find((c) => c.name.startsWith(name));
  if (!found) throw new Error(`no check named ${JSON.stringify(name)}`);
  return found;
}

/** The kit must report the bug as a violation, not pass and not crash on it. */
async function expectViolation(ctx: CheckContext, checks: readonly ConformanceCheck[], name: string) {
  await expect(check(checks, name).run(ctx)).rejects.toBeInstanceOf(ConformanceViolation);
}

describe('broken stores on a real database (node:sqlite file), through their target modules', () => {
  const fixture = (flaw: SplitFlaw) => join(import.meta.dirname, 'fixtures', `${flaw}-store.ts`);
  const opened: CheckContext[] = [];
  afterAll(async () => {
    for (const ctx of opened.splice(0)) await ctx.store.close();
  });
  async function open(flaw: SplitFlaw): Promise<CheckContext> {
    const target = await openTargetModule(fixture(flaw));
    const ctx = { store: await target.createStore(), target, capabilities: target.capabilities ?? {} };
    opened.push(ctx);
    return ctx;
  }
  const notAtomic = /append is not atomic: its messages and its head move are separate writes/;

  it.each(['split-null', 'split-head'] as const)(
    '%s: a second store instance and the raw reader see messages beyond the head while it appends',
    async (flaw) => {
      const ctx = await open(flaw);
      const observed = check(atomicityObservedSpec.checks, 'while one store appends');
      await expect(observed.run(ctx)).rejects.toThrow(notAtomic);
      // This store's load reads every row after afterSeq, so a second instance sees them too.
      await expect(observed.run({ ...ctx, capabilities: {} })).rejects.toThrow(
        /a second store instance loaded .* with headSeq \d+ and \d+ messages — messages beyond the head: the append is not atomic/,
      );
    },
  );

  it.each(['split-null', 'split-head'] as const)(
    '%s: SIGKILLed in a child process between its two statements, it leaves rows beyond the head',
    { timeout: 240_000 },
    async (flaw) => {
      const ctx = await open(flaw);
      const tier = check(processTierSpec.checks, 'process tier: 16 child processes SIGKILLed inside appends');
      await expect(tier.run(ctx)).rejects.toThrow(
        /after a SIGKILL on event-loop turn 1 inside append #1 \(expectedSeq 0\) after 0 acknowledged appends, the crash left \d+ message rows beyond the head 0 \(no session row at all\)/,
      );
      // Without a raw reader the next append at the head is what fails, named for the same cause,
      // whichever actualSeq the store reports.
      const error = await tier.run({ ...ctx, capabilities: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConformanceViolation);
      expect((error as Error).message).toMatch(
        /an append at the loaded head \d+ fails with SeqConflictError \(actualSeq (null|\d+)\): the crash left the session unwritable/,
      );
      expect((error as Error).message).toMatch(notAtomic);
    },
  );

  it('split-head: a loser of the race reports the head it refused, named as the non-atomic write it is', async () => {
    const ctx = await open('split-head');
    await expect(
      check(concurrencySpec.checks, 'of 8 concurrent appends with the same expectedSeq').run(ctx),
    ).rejects.toThrow(
      /SeqConflictError says the head is 2, which is the expectedSeq it refused — the append is not atomic/,
    );
  });

  it('no-seq-check: concurrent writers all commit, and the message says why', async () => {
    const ctx = await open('no-seq-check');
    await expect(
      check(concurrencySpec.checks, 'of 8 concurrent appends with the same expectedSeq').run(ctx),
    ).rejects.toThrow(/8 committed .* the store does not check expectedSeq against the stored head/);
    await expectViolation(ctx, atomicitySpec.checks, 'a seq conflict writes nothing');
  });

  it('no-snapshot: a store that validates the live input, then serialises it again, keeps values it never validated', async () => {
    const ctx = await open('no-snapshot');
    const shifting = check(inputValidationSpec.checks, 'input that answers differently on each read');
    // It stored the later read: a lone surrogate, which SQLite's UTF-8 turned into U+FFFD.
    await expect(shifting.run(ctx)).rejects.toThrow(
      /append with a content getter that answers a valid string once, then a lone surrogate: load returns .*a lone surrogate read later .*, not the value that was read and validated, .* — the store validated the caller's live objects and then read them again to store them; validate and store one copy \(snapshotInput from @agentstore\/core\/store\)/,
    );
    // The correct store it was copied from reads once, and passes.
    const target = await openTargetModule(
      join(import.meta.dirname, '../../docs/examples/custom-store/conformance-target.ts'),
    );
    const good = { store: await target.createStore(), target, capabilities: target.capabilities ?? {} };
    opened.push(good);
    await shifting.run(good);
  });

  /** A flawed store in this process, on its own database file (no module: in-process checks only). */
  async function inProcess(flaw: SplitFlaw): Promise<CheckContext> {
    const target = splitTarget({ flaw });
    const ctx = { store: await target.createStore(), target, capabilities: target.capabilities ?? {} };
    opened.push(ctx);
    return ctx;
  }
  /** The correct example store, for proving a new check passes what it should. */
  async function correctStore(): Promise<CheckContext> {
    const target = await openTargetModule(
      join(import.meta.dirname, '../../docs/examples/custom-store/conformance-target.ts'),
    );
    const ctx = { store: await target.createStore(), target, capabilities: target.capabilities ?? {} };
    opened.push(ctx);
    return ctx;
  }

  it('fence-live-only: a stale epoch writes once its successor released the lease or let it lapse', async () => {
    const fenced = check(leaseSpec.checks, 'a fenced epoch stays fenced once its successor released');
    await expect(fenced.run(await inProcess('fence-live-only'))).rejects.toThrow(
      /after its successor released the lease: the store accepted it .* it compares the lease only while a live lease is stored/,
    );
    await fenced.run(await correctStore());
  });

  it.each([
    ['owner-ci', /owner ids were compared loosely, case-insensitively \("ALICE" for "alice"\)/],
    ['owner-pad-space', /owner ids were compared loosely, ignoring trailing spaces \(a trailing space\)/],
  ] as const)('%s: an owner variant leases another owner’s session', async (flaw, cause) => {
    const ctx = await inProcess(flaw);
    const exact = check(leaseSpec.checks, 'owner and tenant are compared exactly');
    await expect(exact.run(ctx)).rejects.toThrow(cause);
    await expect(exact.run(ctx)).rejects.toThrow(
      /expected SessionAccessDeniedError, but the lease was granted/,
    );
    await exact.run(await correctStore());
  });

  it('owner-ci: under a live lease the access check names the case-insensitive compare, not "busy"', async () => {
    const ctx = await inProcess('owner-ci');
    await expect(check(leaseSpec.checks, 'a different owner or tenant is denied').run(ctx)).rejects.toThrow(
      /expected SessionAccessDeniedError, got SessionBusyError .*: the caller passed the owner check and was stopped only by the live lease — owner ids were compared case-insensitively/,
    );
  });

  it.each([
    ['owner-pad-space', /the filter compared ids loosely, ignoring trailing spaces/],
    ['list-filter-ci', /the filter compared ids loosely, case-insensitively \("ALICE" for "alice"\)/],
    ['owner-ci', /the filter compared ids loosely, case-insensitively \("ALICE" for "alice"\)/],
  ] as const)(
    '%s: a listSessions filter with a variant id lists the original’s sessions',
    async (flaw, cause) => {
      const filters = check(isolationSpec.checks, 'listSessions filters compare exactly');
      await expect(filters.run(await inProcess(flaw))).rejects.toThrow(cause);
      await filters.run(await correctStore());
    },
  );

  it.each(['stale-cache', 'write-behind'] as const)(
    '%s: an acknowledged append is not seen by a load on another instance',
    async (flaw) => {
      const acks = check(
        appendLoadSpec.checks,
        'once an append is acknowledged, a load on another store instance',
      );
      await expect(acks.run(await inProcess(flaw))).rejects.toThrow(
        /instance A appended, instance B loaded: the append was acknowledged with headSeq 3, but the other instance's load returned headSeq 1 .* an acknowledged write was not visible/,
      );
      await acks.run(await correctStore());
    },
  );

  it('nul-refused: a store that refuses U+0000 fails a tool output holding one, named for it', async () => {
    const nul = check(appendLoadSpec.checks, 'U+0000 inside message content');
    await expect(nul.run(await inProcess('nul-refused'))).rejects.toThrow(
      /failed with Error \(code 22021\): invalid byte sequence .* the store refuses a character the boundary accepts/,
    );
    await nul.run(await correctStore());
  });

  it('nul-cut: a store whose driver reads content only up to U+0000 is told so', async () => {
    await expect(
      check(appendLoadSpec.checks, 'U+0000 inside message content').run(await inProcess('nul-cut')),
    ).rejects.toThrow(
      /message #1's content "user text with a NUL \\u0000 inside" came back cut off at its first U\+0000 as "user text with a NUL " — the store or its driver reads text as a C string/,
    );
  });

  it('nul-id-cut: a store whose driver reads message ids only up to U+0000 is told so', async () => {
    const nul = check(appendLoadSpec.checks, 'U+0000 inside message content');
    await expect(nul.run(await inProcess('nul-id-cut'))).rejects.toThrow(
      /message #1's id "conformance-nul-id-[0-9a-f-]+\\u0000tail" came back cut off at its first U\+0000 as "conformance-nul-id-[0-9a-f-]+" — the store or its driver reads the id column as a C string/,
    );
    await nul.run(await correctStore());
  });

  it('proto-assign: a store that decodes JSON by assignment loses an own "__proto__" key to the prototype', async () => {
    const proto = check(appendLoadSpec.checks, 'an own "__proto__" key');
    await expect(proto.run(await inProcess('proto-assign'))).rejects.toThrow(
      /toolCalls\[0\]\.input: an own "__proto__" key came back as \{"a":1\} \(own keys \["a"\], inherits "polluted": true\) — the store decodes JSON into objects by assignment/,
    );
    await proto.run(await correctStore());
  });

  it('retention-client-clock: a sweep by a client whose clock runs ahead deletes a leased session', async () => {
    const skewed = check(retentionSpec.checks, 'deleteIdleSessions run by a client whose clock is ahead');
    await expect(skewed.run(await inProcess('retention-client-clock'))).rejects.toThrow(
      /called by a client whose clock runs 40000 ms ahead, deleted .*, which holds a live 30000 ms lease — the store judges lease liveness by the caller's clock/,
    );
    await skewed.run(await correctStore());
  });

  it('check-outside-txn: passes every in-process concurrency check, and fails when processes race', {
    timeout: 240_000,
  }, async () => {
    const ctx = await open('check-outside-txn');
    // One process with a synchronous driver never interleaves the check and the write …
    await check(concurrencySpec.checks, 'of 8 concurrent appends with the same expectedSeq').run(ctx);
    await check(concurrencySpec.checks, 'writers that retry on SeqConflictError').run(ctx);
    // … three processes do.
    await expect(
      check(processTierSpec.checks, 'process tier: 3 processes appending to one session at once').run(ctx),
    ).rejects.toThrow(
      /120 appends acknowledged by 3 processes racing on one session: \d+ seqs were each acknowledged to more than one append .* appends with the same expectedSeq both committed: the store checks the head \(or the lease\) and writes in separate steps/,
    );
  });

  it('the correct node:sqlite store passes the observer and the process tier', {
    timeout: 240_000,
  }, async () => {
    const target = await openTargetModule(
      join(import.meta.dirname, '../../docs/examples/custom-store/conformance-target.ts'),
    );
    const ctx = { store: await target.createStore(), target, capabilities: target.capabilities ?? {} };
    opened.push(ctx);
    await check(atomicityObservedSpec.checks, 'while one store appends').run(ctx);
    for (const tier of processTierSpec.checks) await tier.run(ctx);
  });
});
