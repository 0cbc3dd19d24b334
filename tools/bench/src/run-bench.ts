import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenTestTarget } from '@agentstore/core/testing';
import { openToolTarget } from '@agentstore/core/testing';
import { machineInfo, machineSnapshot } from './machine.ts';
import { measurePhases, measureTarget } from './measure.ts';
import { type BenchInput, resolveBenchOptions } from './options.ts';
import { type BenchReport, REPORT_NOTE, type StoreResult } from './report.ts';
import { round } from './stats.ts';

export interface BenchProgress {
  /** The target module's file name until its target is open, then the target's name. */
  store: string;
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
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
};

/** The nearest directory above the module holding a package.json, relative to the working directory. */
function packageDirOf(module: string): string {
  let dir = dirname(module.startsWith('file:') ? fileURLToPath(module) : module);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return relative(process.cwd(), dir) || '.';
    const parent = dirname(dir);
    if (parent === dir) return '';
    dir = parent;
  }
}

/**
 * What to call a target before it is open (and when it cannot be): its file name, or for an
 * `index` module its package and path (`@agentstore/postgres (dist/testing/index.js)`).
 */
function moduleLabel(module: string): string {
  const file = module.startsWith('file:') ? fileURLToPath(module) : module;
  if (!/^index\.[cm]?[jt]s$/.test(basename(file))) return basename(file);
  const dir = packageDirOf(module);
  if (dir === '') return basename(file);
  try {
    const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
    return `${name ?? dir} (${relative(resolve(dir), resolve(file))})`;
  } catch {
    return basename(file);
  }
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

  for (const [storeIndex, module] of options.targets.entries()) {
    signal?.throwIfAborted();
    let name = moduleLabel(module);
    const emit = (phase: string, done = 0, total = 1, reason?: string) =>
      onProgress?.({
        store: name,
        storeIndex,
        storeCount: options.targets.length,
        phase,
        phaseIndex: Math.max(0, phases.indexOf(phase)),
        phaseCount: phases.length,
        done,
        total,
        ...(reason !== undefined ? { reason } : {}),
      });
    emit('starting');
    let target: OpenTestTarget;
    try {
      target = await openToolTarget(module);
      name = target.name;
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0]!;
      stores.push({ store: name, status: 'skipped', reason });
      emit('skipped', 1, 1, reason);
      continue;
    }
    try {
      stores.push(
        await measureTarget(
          target,
          options,
          (phase, done, total) => emit(phase, done, total),
          signal,
          packageDirOf(module),
        ),
      );
      emit('done', 1, 1);
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      stores.push({ store: name, status: 'failed', reason });
      emit('failed', 1, 1, reason);
    } finally {
      // A target that cannot be closed (a server left running) is reported, not hidden.
      await target.close().catch((error: unknown) => {
        emit(
          'failed',
          1,
          1,
          `closing the target failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }
  }

  return {
    tool: 'agentstore-bench',
    version: packageVersion(),
    startedAt,
    durationMs: round(performance.now() - started),
    note: REPORT_NOTE,
    machine,
    atEnd: machineSnapshot(),
    options,
    stores,
  };
}
