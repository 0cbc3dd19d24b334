import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { type BackendName, type OpenBackend, openBackend } from '../backends/registry.ts';
import { machineInfo } from './machine.ts';
import { measureBackend, measurePhases } from './measure.ts';
import { type BenchInput, resolveBenchOptions } from './options.ts';
import { type BenchReport, REPORT_NOTE, type StoreResult } from './report.ts';
import { round } from './stats.ts';

export interface BenchProgress {
  store: BackendName;
  /** 0-based position of the store in the run. */
  storeIndex: number;
  storeCount: number;
  /** `starting`, a measurement phase, or `done` / `skipped` / `failed`. */
  phase: string;
  phaseIndex: number;
  phaseCount: number;
  done: number;
  total: number;
  /** Why a store was skipped or failed. */
  reason?: string;
}

export interface BenchHooks {
  onProgress?: (progress: BenchProgress) => void;
  /** Aborting stops the measurement and still stops every server the bench started. */
  signal?: AbortSignal;
}

const packageVersion = (): string => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
};

/** The registry leaves SQLite's file and a persisted D1 in temp dirs of their own: removed here. */
function removeTempData(backend: OpenBackend): void {
  const { path, persist } = backend.handle.options;
  const dir = backend.name === 'sqlite' && typeof path === 'string' ? dirname(path) : persist;
  if (typeof dir !== 'string') return;
  const owned = resolve(dirname(dir)) === resolve(tmpdir()) && /^agentstore-(sqlite|d1)-/.test(basename(dir));
  if (owned) rmSync(dir, { recursive: true, force: true });
}

/**
 * Measures each store in turn: starts its server (or uses the AGENTSTORE_* one), times it,
 * stops it. A store whose server or adapter is missing is reported as skipped, not thrown.
 */
export async function runBench(input: BenchInput = {}, hooks: BenchHooks = {}): Promise<BenchReport> {
  const options = resolveBenchOptions(input);
  const { signal, onProgress } = hooks;
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  const started = performance.now();
  const phases = measurePhases(options);
  const stores: StoreResult[] = [];

  for (const [storeIndex, name] of options.stores.entries()) {
    signal?.throwIfAborted();
    const emit = (phase: string, done = 0, total = 1, reason?: string) =>
      onProgress?.({
        store: name,
        storeIndex,
        storeCount: options.stores.length,
        phase,
        phaseIndex: Math.max(0, phases.indexOf(phase)),
        phaseCount: phases.length,
        done,
        total,
        ...(reason !== undefined ? { reason } : {}),
      });
    emit('starting');
    let backend: OpenBackend;
    try {
      // D1's binding lives inside this process's miniflare: persisted, a second miniflare can
      // open the same data for the counted store. Server backends are reopened by URL.
      backend = await openBackend(name, { persist: name === 'd1' });
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0]!;
      stores.push({ store: name, status: 'skipped', reason });
      emit('skipped', 1, 1, reason);
      continue;
    }
    try {
      stores.push(
        await measureBackend(backend, options, (phase, done, total) => emit(phase, done, total), signal),
      );
      emit('done', 1, 1);
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      stores.push({ store: name, status: 'failed', reason });
      emit('failed', 1, 1, reason);
    } finally {
      // A backend that cannot be closed (a server left running) is reported, not hidden.
      await backend.close().catch((error: unknown) => {
        emit(
          'failed',
          1,
          1,
          `closing the backend failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      removeTempData(backend);
    }
  }

  return {
    tool: 'agentstore-bench',
    version: packageVersion(),
    startedAt,
    durationMs: round(performance.now() - started),
    note: REPORT_NOTE,
    machine,
    options,
    stores,
  };
}
