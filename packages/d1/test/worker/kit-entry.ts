import {
  applicableChecks,
  type ConformanceTarget,
  conformanceSpecs,
  trackSessions,
} from '@agentstore/conformance';
import { type D1DatabaseLike, d1Store } from '../../src/index.ts';
import { d1Corrupt, d1Floor, d1RawReader } from '../../src/testing/capabilities.ts';

/**
 * Runs one of the conformance kit's checks INSIDE workerd, against the D1 binding, with the
 * same capabilities the Node-side run uses. The kit's checks are plain functions; only its
 * vitest registration is left out of this bundle.
 */
interface Env {
  DB: D1DatabaseLike;
}

/**
 * Every check shares the worker's one database, as a deployment shares a schema. Retention sweeps
 * every idle session of its store, so (as the kit asks) it gets tables of its own: the kit refuses
 * to sweep sessions it did not write in this request.
 */
const tablePrefix = (spec: string) => (spec === 'retention' ? 'kit_retention_' : 'kit_');

function target(db: D1DatabaseLike, prefix: string): ConformanceTarget {
  const tables = d1Store({ binding: db }, { tablePrefix: prefix }).tables;
  return {
    name: 'd1 inside workerd',
    createStore: () => d1Store({ binding: db }, { tablePrefix: prefix }),
    capabilities: {
      raw: d1RawReader(db, tables),
      corrupt: d1Corrupt(db, tables),
      floor: d1Floor(db, tables),
    },
  };
}

/** Sessions the kit wrote in this worker, by spec: a check's sweep may delete them, and nothing else. */
const written = new Map<string, Set<string>>();

async function runCheck(url: URL, env: Env) {
  const t = target(env.DB, tablePrefix(url.searchParams.get('spec') ?? ''));
  const spec = conformanceSpecs.find((s) => s.title === url.searchParams.get('spec'));
  const check =
    spec && applicableChecks(t, spec.checks).find((c) => c.name === url.searchParams.get('check'));
  if (!check) return { ok: false, error: `no applicable check ${url.search}` };
  const opened = await t.createStore();
  await (opened as ReturnType<typeof d1Store>).migrate();
  const own = written.get(spec.title) ?? new Set<string>();
  written.set(spec.title, own);
  const { store } = trackSessions(opened, own);
  const start = Date.now();
  try {
    await check.run({ store, target: t, capabilities: t.capabilities ?? {}, ownSessions: own });
    return { ok: true, ms: Date.now() - start };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    return { ok: false, ms: Date.now() - start, error: `${e.name}: ${e.message}`, stack: e.stack };
  } finally {
    await store.close();
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return Response.json(await runCheck(new URL(request.url), env));
  },
};
