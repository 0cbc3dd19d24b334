#!/usr/bin/env node
// The explicit perf job: time ratios to the hand-written floor, judged on many interleaved
// samples in repeated rounds (CI's perf gate only counts; see specs/perf-gate.ts). The figures are
// the bench's per-step measure (measureStep). Exits 1 when a judged ratio's median round is beyond
// the target's `maxFloorRatio` (default 3).
// Run: agentstore-perf --target <modules> (in the repository: pnpm perf), --help for the options.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openToolTarget } from '@agentstore/core/testing';
import { formatRatio } from '../format.ts';
import { describeMachine, machineInfo } from '../machine.ts';
import { formatRatioSpread, formatSpread } from '../markdown.ts';
import {
  DEFAULT_MAX_FLOOR_RATIO,
  measurePerfStep,
  PERF_DEFAULTS,
  type PerfVerdict,
  perfVerdicts,
} from '../perf/ratios.ts';

/**
 * Inside the agentstore repository (`pnpm perf`, run from its root) the targets default to the
 * SQLite and Postgres sources; anywhere else `--target` is required.
 */
const REPOSITORY_TARGETS = ['packages/sqlite/src/testing/index.ts', 'packages/postgres/src/testing/index.ts'];

const PERF_USAGE = `Usage: agentstore-perf --target <module>[,<module>…] [--rounds N] [--samples N] [--steps S] [--model-latency-ms N]

Times each store's durable overhead per tool step against its hand-written floor in interleaved
rounds and judges the ratios against the target's maxFloorRatio (default ${DEFAULT_MAX_FLOOR_RATIO}); exits 1 when one is
beyond it. Never run by CI (times depend on the machine): CI's perf gate counts instead.

  --target            target modules, comma-separated: an adapter's ./testing entry, e.g.
                      node_modules/@agentstore/postgres/dist/testing/index.js, or your own store's
                      target file (docs/custom-store.md). Required, except from the root of the
                      agentstore repository, where it defaults to ${REPOSITORY_TARGETS.join(',')}
  --rounds            rounds (default ${PERF_DEFAULTS.rounds})
  --samples           samples per side and round (default ${PERF_DEFAULTS.samples})
  --steps             S: durable and stateless runs of S and 2S tool steps are timed (default ${PERF_DEFAULTS.steps})
  --model-latency-ms  the scripted model's fixed latency (default ${PERF_DEFAULTS.modelLatencyMs})
  -h, --help          this text

The built-in Postgres, Redis and DynamoDB targets use AGENTSTORE_PG_URL, AGENTSTORE_REDIS_URL or
AGENTSTORE_DYNAMODB_ENDPOINT when set; otherwise they start a throwaway server through
@agentstore/servers.`;

class PerfUsageError extends Error {}

const count = (name: string, text: string, min = 1): number => {
  const value = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new PerfUsageError(`--${name} must be a whole number ≥ ${min}, not ${JSON.stringify(text)}`);
  }
  return value;
};

function parsePerfArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv.filter((arg) => arg !== '--'),
      options: {
        target: { type: 'string' },
        rounds: { type: 'string', default: String(PERF_DEFAULTS.rounds) },
        samples: { type: 'string', default: String(PERF_DEFAULTS.samples) },
        steps: { type: 'string', default: String(PERF_DEFAULTS.steps) },
        'model-latency-ms': { type: 'string', default: String(PERF_DEFAULTS.modelLatencyMs) },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    // node:util names the flag ("Unknown option '--x'"): a usage error, not a crash.
    throw new PerfUsageError((error as Error).message);
  }
}

async function main(argv: string[]): Promise<number> {
  const values = parsePerfArgs(argv);
  if (values.help) {
    console.log(PERF_USAGE);
    return 0;
  }
  const inRepository = REPOSITORY_TARGETS.every((path) => existsSync(resolve(process.cwd(), path)));
  const targets = values.target ?? (inRepository ? REPOSITORY_TARGETS.join(',') : '');
  const modules = targets
    .split(',')
    .filter(Boolean)
    .map((path) => resolve(process.cwd(), path));
  if (modules.length === 0) throw new PerfUsageError('--target names no target module');
  const sampling = {
    rounds: count('rounds', values.rounds),
    samples: count('samples', values.samples),
    steps: count('steps', values.steps),
    modelLatencyMs: count('model-latency-ms', values['model-latency-ms'], 0),
  };
  console.log(`machine: ${describeMachine(machineInfo())}`);
  console.log(
    `${sampling.rounds} rounds × ${sampling.samples} interleaved samples per side: durable and stateless runs of ${sampling.steps} and ${2 * sampling.steps} tool steps (model ${sampling.modelLatencyMs} ms), ${sampling.steps} store and floor appends`,
  );

  const verdicts: (PerfVerdict & { store: string })[] = [];
  for (const module of modules) {
    const target = await openToolTarget(module);
    try {
      const floor = target.capabilities?.floor;
      if (!floor) {
        console.log(`${target.name}: no floor; nothing to compare`);
        continue;
      }
      console.log(`${target.name}: ${await target.describe()}`);
      const store = await target.createStore();
      try {
        const step = await measurePerfStep(store, floor, sampling, (done) =>
          console.log(`  round ${done}/${sampling.rounds} (load ${loadavg()[0]!.toFixed(2)})`),
        );
        const f = step.floor!;
        console.log(
          `  durable overhead / step ${formatSpread(step.overheadPerStep)}, one floor append paced as a step ${formatSpread(f.pacedAppend)} (made inside the same loop ${formatSpread(f.inLoopAppend)}), ` +
            `marginal / step from whole runs ${formatSpread(step.marginalPerStep)}, fixed / run ${formatSpread(step.fixedPerRun)}, ` +
            `write #1 via store ${formatSpread(step.storeAppend)}, one floor append back-to-back ${formatSpread(f.append)}, two-commit floor step ${formatSpread(f.twoCommit)}`,
        );
        for (const verdict of perfVerdicts(step, target.maxFloorRatio ?? DEFAULT_MAX_FLOOR_RATIO))
          verdicts.push({ ...verdict, store: target.name });
      } finally {
        await (target.destroyStore ? target.destroyStore(store) : store.close());
      }
    } finally {
      await target.close();
    }
  }

  console.log('\nmedian round [lowest–highest round]');
  for (const v of verdicts) {
    const mark = v.limit === null ? ' ' : v.ok ? '✓' : '✗';
    const limit = v.limit === null ? 'reported' : `limit ${formatRatio(v.limit)}`;
    console.log(`${mark} ${v.store}: ${v.what}: ${formatRatioSpread(v.ratio)} (${limit})`);
  }
  return verdicts.every((v) => v.ok) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof PerfUsageError) {
      console.error(`agentstore-perf: ${error.message}\n\n${PERF_USAGE}`);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
