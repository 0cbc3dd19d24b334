import { fileURLToPath } from 'node:url';
import {
  applicableChecks,
  type ConformanceTarget,
  conformanceSpecs,
  type RawAppendFloor,
  type RawReader,
} from '@agentstore/conformance';
import { type D1LaunchInfo, type LaunchedServer, launchD1 } from '@agentstore/servers';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { bundleWorker } from './worker/bundle.ts';

/**
 * The conformance kit's own checks, run inside workerd next to the D1 binding (one request per
 * check). The kit's `vitest` registration is replaced by a stub in the bundle; its assertions
 * use `node:util`, hence `nodejs_compat` here (the store itself needs no Node API: see
 * worker.test.ts, whose worker runs without it).
 */
const VITEST_STUB = `
const unavailable = () => { throw new Error('vitest does not run inside the worker'); };
export const describe = unavailable, it = unavailable, test = unavailable, beforeAll = unavailable, afterAll = unavailable;
`;

let server: LaunchedServer<D1LaunchInfo>;

beforeAll(async () => {
  const bundle = await bundleWorker(fileURLToPath(new URL('./worker/kit-entry.ts', import.meta.url)), {
    replace: { vitest: VITEST_STUB },
    external: [/^node:/],
  });
  server = await launchD1({ script: bundle.code, compatibilityFlags: ['nodejs_compat'] });
});
afterAll(() => server?.stop());

// The same capabilities the worker offers, so the same checks are registered here.
const shape: ConformanceTarget = {
  name: 'd1 inside workerd',
  createStore: () => {
    throw new Error('the store lives in the worker');
  },
  capabilities: { raw: {} as RawReader, corrupt: async () => {}, floor: {} as RawAppendFloor },
};

for (const spec of conformanceSpecs) {
  const checks = applicableChecks(shape, spec.checks);
  if (checks.length === 0) continue;
  describe(`d1 inside workerd: ${spec.title}`, () => {
    for (const check of checks) {
      it(
        check.name,
        async () => {
          const query = new URLSearchParams({ spec: spec.title, check: check.name });
          const response = await server.info.miniflare.dispatchFetch(`http://worker/?${query}`);
          const result = (await response.json()) as { ok: boolean; error?: string; stack?: string };
          if (!result.ok) throw new Error(`${result.error}\n--- in the worker:\n${result.stack ?? ''}`);
        },
        check.timeoutMs,
      );
    }
  });
}
