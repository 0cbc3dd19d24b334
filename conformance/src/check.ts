import type { AgentStore } from '@agentstore/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ConformanceTarget, StoreCapabilities } from './target.ts';

/** What a check may need beyond the contract. A check is registered only when the target offers all it needs. */
export type Capability = 'raw' | 'corrupt' | 'floor' | 'durable' | 'roundTrips';

export interface CheckContext {
  store: AgentStore;
  target: ConformanceTarget;
  capabilities: StoreCapabilities;
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
  if (target.capabilities?.roundTrips) offered.add('roundTrips');
  if (target.durable !== false) offered.add('durable');
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
 * Registers a spec's checks as vitest tests, with one store per spec file: created in
 * `beforeAll`, destroyed in `afterAll`. Checks the target cannot run are not registered at all.
 */
export function describeSpec(target: ConformanceTarget, spec: ConformanceSpec): void {
  const applicable = applicableChecks(target, spec.checks);
  if (applicable.length === 0) return;
  describe(`${target.name}: ${spec.title}`, () => {
    let store: AgentStore | undefined;
    beforeAll(async () => {
      store = await target.createStore();
    });
    afterAll(async () => {
      if (!store) return;
      if (target.destroyStore) await target.destroyStore(store);
      else await store.close();
    });
    for (const check of applicable) {
      it(
        check.name,
        async () => {
          if (!store) throw new Error(`${target.name}: createStore() did not return a store`);
          await check.run({ store, target, capabilities: target.capabilities ?? {} });
        },
        check.timeoutMs,
      );
    }
  });
}
