import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MIN_PAYLOAD_BYTES } from './workload.ts';

export interface BenchOptions {
  /** Target modules (files or URLs) to measure, in this order: the files agentstore-conformance takes. */
  targets: string[];
  /** S: tool steps of the short timed run of the headline (the long run has 2S), and of each throughput session. */
  steps: number;
  /** Bytes of tool output per step (and of each seeded message). */
  payloadBytes: number;
  /** Rounds of every interleaved time figure (each round's median is kept). */
  rounds: number;
  /** Samples per round of each side of the headline (one sample = a whole run, or `steps` appends). */
  samples: number;
  /** The scripted model's fixed latency per request in the headline, ms. */
  modelLatencyMs: number;
  /** Session sizes (stored messages) of the history-growth table. */
  historySizes: number[];
  /** Samples per round of each history figure. */
  historySamples: number;
  /** S of the history table's resumed runs (of S and 2S steps). */
  resumeSteps: number;
  /** Concurrency levels: workers running whole sessions side by side. */
  concurrency: number[];
  /** Rounds of each throughput level (store and floor alternate in each). */
  throughputRounds: number;
  /** Each side of each throughput round takes sessions for this long. */
  throughputBudgetMs: number;
  /** At most this many sessions per side and throughput round. */
  sessions: number;
  /** Few rounds and samples, for tests. */
  quick: boolean;
}

/** The largest message every store must accept (the conformance kit's floor for `maxMessageBytes`). */
export const MAX_PAYLOAD_BYTES = 262_144;

export const BENCH_DEFAULTS = {
  steps: 10,
  payloadBytes: 300,
  rounds: 5,
  samples: 12,
  modelLatencyMs: 2,
  historySizes: [10, 100, 1_000, 10_000],
  historySamples: 5,
  resumeSteps: 10,
  concurrency: [1, 8, 32],
  throughputRounds: 3,
  throughputBudgetMs: 1_500,
  sessions: 200,
} as const;

/** `--quick`: every figure, few samples: for tests and a first look, not for publishing. */
export const QUICK_DEFAULTS = {
  rounds: 2,
  samples: 1,
  historySizes: [10, 100],
  historySamples: 1,
  throughputRounds: 1,
  throughputBudgetMs: 100,
  sessions: 32,
} as const;

export class BenchUsageError extends Error {
  readonly code = 'BENCH_USAGE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export type BenchInput = Partial<BenchOptions>;

const wholeNumber = (name: string, value: number, min: number, max: number): number => {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new BenchUsageError(`--${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
};

const levels = (name: string, values: readonly number[], min: number, max: number): number[] => {
  if (values.length === 0) throw new BenchUsageError(`--${name} names no value`);
  for (const value of values) wholeNumber(name, value, min, max);
  return [...new Set(values)].sort((a, b) => a - b);
};

/** Fills defaults (quick or full) and rejects what cannot be measured. */
export function resolveBenchOptions(input: BenchInput = {}, { forHelp = false } = {}): BenchOptions {
  const quick = input.quick ?? false;
  const pick = <K extends keyof typeof BENCH_DEFAULTS>(key: K) =>
    (quick && key in QUICK_DEFAULTS
      ? QUICK_DEFAULTS[key as keyof typeof QUICK_DEFAULTS]
      : BENCH_DEFAULTS[key]) as (typeof BENCH_DEFAULTS)[K];
  const targets = input.targets ?? [];
  if (targets.length === 0 && !forHelp) throw new BenchUsageError('--target names no target module');
  const payloadBytes = input.payloadBytes ?? BENCH_DEFAULTS.payloadBytes;
  if (
    !Number.isSafeInteger(payloadBytes) ||
    payloadBytes < MIN_PAYLOAD_BYTES ||
    payloadBytes > MAX_PAYLOAD_BYTES
  ) {
    throw new BenchUsageError(
      `--payload must be a whole number of bytes from ${MIN_PAYLOAD_BYTES} (an empty message) to ${MAX_PAYLOAD_BYTES}, got ${payloadBytes}`,
    );
  }
  return {
    targets: [...new Set(targets)],
    steps: wholeNumber('steps', input.steps ?? BENCH_DEFAULTS.steps, 1, 1000),
    payloadBytes,
    rounds: wholeNumber('rounds', input.rounds ?? pick('rounds'), 1, 1000),
    samples: wholeNumber('samples', input.samples ?? pick('samples'), 1, 100_000),
    modelLatencyMs: wholeNumber(
      'model-latency',
      input.modelLatencyMs ?? BENCH_DEFAULTS.modelLatencyMs,
      0,
      60_000,
    ),
    historySizes: levels('history', input.historySizes ?? pick('historySizes'), 1, 1_000_000),
    historySamples: wholeNumber('history-samples', input.historySamples ?? pick('historySamples'), 1, 10_000),
    resumeSteps: wholeNumber('resume-steps', input.resumeSteps ?? BENCH_DEFAULTS.resumeSteps, 1, 1000),
    concurrency: levels('concurrency', input.concurrency ?? pick('concurrency'), 1, 1024),
    throughputRounds: wholeNumber(
      'throughput-rounds',
      input.throughputRounds ?? pick('throughputRounds'),
      1,
      1000,
    ),
    throughputBudgetMs: wholeNumber(
      'budget-ms',
      input.throughputBudgetMs ?? pick('throughputBudgetMs'),
      1,
      3_600_000,
    ),
    sessions: wholeNumber('sessions', input.sessions ?? pick('sessions'), 1, 1_000_000),
    quick,
  };
}

export const BENCH_USAGE = `Usage: agentstore-bench [options]

Measures what durability costs per tool step on each store, on this machine, against the
same backend's hand-written floor (the cheapest correct append): the durable overhead of a
tool step through run() with a model of fixed latency (from each reply being due to the next
request, less the same without a store), in µs and in floor appends paced as in a step; the
same from whole runs of S and 2S steps, and the fixed cost per run; a one- and a two-commit floor; round trips counted on the timed store; a history-growth table
(append, load, resume, loop CPU and bytes per step at 10 to 10,000 stored
messages); and steps/s at several concurrency levels for the store and the floor. Every
time figure is
the median of ${BENCH_DEFAULTS.rounds} interleaved rounds' medians, with the spread (lowest–highest round).

  --target <modules>      target module files, comma-separated (required): the files
                          agentstore-conformance takes; built-in stores publish theirs
                          as @agentstore/<name>/testing.
  --steps <n>             S: the headline times runs of S and 2S tool steps; throughput
                          sessions have S steps (default ${BENCH_DEFAULTS.steps})
  --payload <bytes>       tool output bytes per step (default ${BENCH_DEFAULTS.payloadBytes})
  --rounds <n>            rounds per time figure (default ${BENCH_DEFAULTS.rounds}; quick ${QUICK_DEFAULTS.rounds})
  --samples <n>           headline samples per side and round (default ${BENCH_DEFAULTS.samples}; quick ${QUICK_DEFAULTS.samples})
  --model-latency <ms>    the scripted model's fixed latency in the headline (default ${BENCH_DEFAULTS.modelLatencyMs})
  --history <list>        session sizes of the history table (default ${BENCH_DEFAULTS.historySizes.join(',')}; quick ${QUICK_DEFAULTS.historySizes.join(',')})
  --history-samples <n>   history samples per figure and round (default ${BENCH_DEFAULTS.historySamples})
  --concurrency <list>    throughput levels (default ${BENCH_DEFAULTS.concurrency.join(',')})
  --throughput-rounds <n> rounds per throughput level (default ${BENCH_DEFAULTS.throughputRounds}; quick ${QUICK_DEFAULTS.throughputRounds})
  --budget-ms <ms>        time box per throughput side and round (default ${BENCH_DEFAULTS.throughputBudgetMs})
  --sessions <n>          at most this many sessions per side and round (default ${BENCH_DEFAULTS.sessions})
  --quick                 every figure with few samples (tests, a first look)
  --json <file>           write every figure, the machine and the settings as JSON
  --chart <file>          write an SVG chart
  --markdown <file>       rewrite the results section of this file (between
                          <!-- results:start --> and <!-- results:end -->)
  --readme                write each store's results into the README.md of the package
                          holding its target module, between <!-- bench:start --> and
                          <!-- bench:end --> (READMEs without the markers are left alone)
  --help, -h              show this help

Servers: the built-in targets start and stop a throwaway Postgres (initdb/pg_ctl),
redis-server, DynamoDB Local (Java) or D1 (miniflare); set AGENTSTORE_PG_URL,
AGENTSTORE_REDIS_URL or AGENTSTORE_DYNAMODB_ENDPOINT to measure a server you run instead.
A target that cannot open is reported as skipped.

Exits 0 when every store that started was measured, 1 when one failed or none started,
2 on a usage error.`;

export interface BenchCommand {
  help: boolean;
  options: BenchOptions;
  json: string | null;
  chart: string | null;
  markdown: string | null;
  readme: boolean;
}

const list = (name: string, text: string): string[] => {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new BenchUsageError(`--${name} needs a comma-separated list`);
  return items;
};

const integer = (name: string, text: string): number => {
  if (!/^\d+$/.test(text.trim()))
    throw new BenchUsageError(`--${name} must be a whole number, got "${text}"`);
  return Number(text);
};

/** Parses the command line; every mistake is a `BenchUsageError`. */
export function parseBenchArgs(argv: string[]): BenchCommand {
  let values: ReturnType<typeof parseCommandLine>['values'];
  try {
    ({ values } = parseCommandLine(argv.filter((arg) => arg !== '--')));
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  const input: BenchInput = { quick: values.quick ?? false };
  if (values.target !== undefined)
    input.targets = list('target', values.target).map((path) => resolve(process.cwd(), path));
  const numbers: [keyof typeof values, keyof BenchInput][] = [
    ['steps', 'steps'],
    ['payload', 'payloadBytes'],
    ['rounds', 'rounds'],
    ['samples', 'samples'],
    ['model-latency', 'modelLatencyMs'],
    ['history-samples', 'historySamples'],
    ['throughput-rounds', 'throughputRounds'],
    ['budget-ms', 'throughputBudgetMs'],
    ['sessions', 'sessions'],
  ];
  for (const [flag, key] of numbers) {
    const text = values[flag];
    if (typeof text === 'string') (input as Record<string, unknown>)[key] = integer(flag, text);
  }
  if (values.history !== undefined)
    input.historySizes = list('history', values.history).map((size) => integer('history', size));
  if (values.concurrency !== undefined)
    input.concurrency = list('concurrency', values.concurrency).map((level) => integer('concurrency', level));
  return {
    help: values.help ?? false,
    options: resolveBenchOptions(input, { forHelp: values.help ?? false }),
    json: values.json ?? null,
    chart: values.chart ?? null,
    markdown: values.markdown ?? null,
    readme: values.readme ?? false,
  };
}

function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      target: { type: 'string', short: 't' },
      steps: { type: 'string' },
      payload: { type: 'string' },
      rounds: { type: 'string' },
      samples: { type: 'string' },
      'model-latency': { type: 'string' },
      history: { type: 'string' },
      'history-samples': { type: 'string' },
      concurrency: { type: 'string' },
      'throughput-rounds': { type: 'string' },
      'budget-ms': { type: 'string' },
      sessions: { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'string' },
      chart: { type: 'string' },
      markdown: { type: 'string' },
      readme: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
