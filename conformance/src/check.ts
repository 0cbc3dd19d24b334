import type { AgentStore } from '@agentstore/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { withMovedHelperHint } from './moved-helpers.ts';
import { deleteCreated, trackSessions } from './session-tracker.ts';
import type { ConformanceTarget, OpenTestTarget, RawAppendFloor, StoreCapabilities } from './target.ts';

/** What a check may need beyond the contract. A check is registered only when the target offers all it needs. */
export type Capability = 'raw' | 'corrupt' | 'floor' | 'durable' | 'process' | 'roundTrips';

export interface CheckContext {
  store: AgentStore;
  target: ConformanceTarget;
  capabilities: StoreCapabilities;
  /**
   * Every session id the spec's stores wrote to so far (set by `describeSpec`): what the kit may
   * delete. Retention sweeps refuse to run while an idle session outside it exists.
   */
  ownSessions?: ReadonlySet<string>;
}

/** One conformance check: throws on a violation, resolves when the store keeps the promise. */
export interface ConformanceCheck {
  name: string;
  requires?: readonly Capability[];
  /** Test timeout in ms, for checks that wait on leases or run many operations. */
  timeoutMs?: number;
  run(ctx: CheckContext): Promise<void>;
}

/** One capability's checks, registered as one vitest suite. */
export interface ConformanceSpec {
  title: string;
  checks: readonly ConformanceCheck[];
}

/** The capabilities a target offers, decided by what it declares, never by its name. */
export function offeredCapabilities(target: ConformanceTarget): Set<Capability> {
  const offered = new Set<Capability>();
  if (target.capabilities?.raw) offered.add('raw');
  if (target.capabilities?.corrupt) offered.add('corrupt');
  if (target.capabilities?.floor) offered.add('floor');
  // The target counts round trips per store and floor (`OpenTestTarget.roundTrips`).
  if (typeof (target as Partial<OpenTestTarget>).roundTrips === 'function') offered.add('roundTrips');
  if (target.durable !== false) offered.add('durable');
  // Another process can open the same data: the target names its module and how to reopen it.
  if (target.module && target.reopen !== undefined && target.multiProcess !== false) offered.add('process');
  return offered;
}

/** The checks of a spec that this target can run. */
export function applicableChecks(
  target: ConformanceTarget,
  checks: readonly ConformanceCheck[],
): ConformanceCheck[] {
  const offered = offeredCapabilities(target);
  return checks.filter((check) => (check.requires ?? []).every((capability) => offered.has(capability)));
}

/**
 * A spec's store, and the target its checks see: every session written through either (the
 * spec's store, or a second store a check creates) is remembered, and `cleanup` deletes them all,
 * so the kit leaves nothing behind in a shared database.
 */
export async function openSpecContext(
  target: ConformanceTarget,
): Promise<{ ctx: CheckContext; cleanup: () => Promise<void> }> {
  const inner = await target.createStore();
  const { store, created } = trackSessions(inner);
  // A target that counts round trips counts them on the stores it made, not on our wrappers.
  const unwrapped = new WeakMap<object, AgentStore>([[store, inner]]);
  const counter = (target as Partial<OpenTestTarget>).roundTrips;
  const tracked: ConformanceTarget & Partial<OpenTestTarget> = {
    ...target,
    createStore: async () => {
      const made = await target.createStore();
      const wrapped = trackSessions(made, created).store;
      unwrapped.set(wrapped, made);
      return wrapped;
    },
    ...(counter
      ? {
          roundTrips: (subject: AgentStore | RawAppendFloor) =>
            counter.call(target, unwrapped.get(subject) ?? subject),
        }
      : {}),
  };
  return {
    ctx: { store, target: tracked, capabilities: target.capabilities ?? {}, ownSessions: created },
    async cleanup() {
      try {
        await deleteCreated(inner, created);
      } finally {
        if (target.destroyStore) await target.destroyStore(inner);
        else await inner.close();
      }
    },
  };
}

/**
 * Runs one check. A failure that comes from a store calling a helper where it no longer is
 * (`TypeError: validateAppendInput is not a function`) says where the helper went.
 */
export async function runCheck(check: ConformanceCheck, ctx: CheckContext): Promise<void> {
  try {
    await check.run(ctx);
  } catch (error) {
    throw withMovedHelperHint(error);
  }
}

/**
 * Registers a spec's checks as vitest tests, with one store per spec file: created in
 * `beforeAll`; in `afterAll` every session the spec wrote is deleted and the store destroyed.
 * Checks the target cannot run are not registered at all.
 */
export function describeSpec(target: ConformanceTarget, spec: ConformanceSpec): void {
  const applicable = applicableChecks(target, spec.checks);
  if (applicable.length === 0) return;
  describe(`${target.name}: ${spec.title}`, () => {
    let opened: Awaited<ReturnType<typeof openSpecContext>> | undefined;
    beforeAll(async () => {
      opened = await openSpecContext(target).catch((error: unknown) => {
        throw withMovedHelperHint(error);
      });
    });
    afterAll(async () => {
      await opened?.cleanup();
    });
    for (const check of applicable) {
      it(
        check.name,
        async () => {
          if (!opened) throw new Error(`${target.name}: createStore() did not return a store`);
          await runCheck(check, opened.ctx);
        },
        check.timeoutMs,
      );
    }
  });
}
