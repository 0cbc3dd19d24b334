import type { AgentStore } from '../store/contract.ts';
import type { ConformanceTarget, OpenTestTarget } from './store-target.ts';

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

/** A file URL for an absolute path; URLs pass through. (No node:url: the kit's entry also loads in Workers.) */
export const moduleUrl = (module: string): string => {
  if (/^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-z]:[\\/]/i.test(module)) return module;
  const path = module.replaceAll('\\', '/');
  return `file://${encodeURI(path.startsWith('/') ? path : `/${path}`)
    .replaceAll('?', '%3F')
    .replaceAll('#', '%23')}`;
};

const basename = (path: string): string => path.split(/[\\/]/).at(-1) ?? path;

/**
 * The target a module describes. Its default export is a `ConformanceTarget`, a function
 * returning one (called with `options`, the target's `reopen` in another process), or a store
 * factory (a function returning an `AgentStore`), which is probed once and then used as
 * `createStore`. The result records `module`, so child processes can open it again.
 */
export async function targetFromModule(
  namespace: Record<string, unknown>,
  modulePath: string,
  options?: ConformanceTarget['reopen'],
): Promise<ConformanceTarget> {
  const exported = namespace.default;
  const expected =
    'a ConformanceTarget ({ name, createStore, capabilities?, durable? }), a function returning one, or a store factory';
  const withModule = (target: ConformanceTarget): ConformanceTarget =>
    target.module ? target : { ...target, module: moduleUrl(modulePath) };
  if (isTarget(exported)) return withModule(exported);
  if (typeof exported === 'function') {
    const made: unknown = await (exported as (options?: unknown) => unknown)(options);
    if (isTarget(made)) return withModule(made);
    if (isStore(made)) {
      await made.close();
      return withModule({
        name: basename(modulePath),
        createStore: () => (exported as (options?: unknown) => Promise<AgentStore>)(options),
      });
    }
    throw new TypeError(
      `${modulePath}: the default export returned ${typeof made}; it must return ${expected}`,
    );
  }
  throw new TypeError(`${modulePath} must default-export ${expected}`);
}

/** Imports a target module (in this process) and opens its target with `options`. */
export async function openTargetModule(
  module: string,
  options?: ConformanceTarget['reopen'],
): Promise<ConformanceTarget> {
  const url = moduleUrl(module);
  const namespace = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
  return targetFromModule(namespace, module, options);
}

const isOpen = (target: ConformanceTarget): target is OpenTestTarget =>
  typeof (target as OpenTestTarget).describe === 'function' &&
  typeof (target as OpenTestTarget).close === 'function';

/**
 * A target module opened for a tool (`agentstore-torture`, `agentstore-bench`): an adapter's
 * `./testing` entry gives an `OpenTestTarget` already; a plain `ConformanceTarget` (a custom
 * store's) gets `describe` (its name) and a `close` with nothing to release.
 */
export async function openToolTarget(
  module: string,
  options?: ConformanceTarget['reopen'],
): Promise<OpenTestTarget> {
  const target = await openTargetModule(module, options);
  if (isOpen(target)) return target;
  return { ...target, describe: async () => target.name, close: async () => {} };
}
