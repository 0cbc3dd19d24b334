import { basename } from 'node:path';
import type { AgentStore } from '@agentstore/core';
import type { ConformanceTarget } from '../target.ts';

/** How the CLI tells its suite which module to test: workers inherit the environment. */
export const TARGET_MODULE_ENV = 'AGENTSTORE_CONFORMANCE_TARGET';

const isTarget = (value: unknown): value is ConformanceTarget =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ConformanceTarget).createStore === 'function' &&
  typeof (value as ConformanceTarget).name === 'string';

const isStore = (value: unknown): value is AgentStore =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as AgentStore).append === 'function' &&
  typeof (value as AgentStore).load === 'function';

/**
 * The target a user module describes. Its default export is a `ConformanceTarget`, a function
 * returning one, or a store factory (a function returning an `AgentStore`), which is probed once
 * and then used as `createStore`.
 */
export async function targetFromModule(
  namespace: Record<string, unknown>,
  modulePath: string,
): Promise<ConformanceTarget> {
  const exported = namespace.default;
  const expected =
    'a ConformanceTarget ({ name, createStore, capabilities?, durable? }), a function returning one, or a store factory';
  if (isTarget(exported)) return exported;
  if (typeof exported === 'function') {
    const made: unknown = await (exported as () => unknown)();
    if (isTarget(made)) return made;
    if (isStore(made)) {
      await made.close();
      return { name: basename(modulePath), createStore: exported as () => Promise<AgentStore> };
    }
    throw new TypeError(
      `${modulePath}: the default export returned ${typeof made}; it must return ${expected}`,
    );
  }
  throw new TypeError(`${modulePath} must default-export ${expected}`);
}
