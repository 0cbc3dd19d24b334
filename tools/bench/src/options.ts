import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MIN_PAYLOAD_BYTES } from './workload.ts';

export interface BenchOptions {
  /** Target modules (files or URLs) to measure, in this order: the files agentstore-conformance takes. */
  targets: string[];
  /** Tool steps per scripted session. */
  steps: number;
  /** Sessions run at each concurrency level. */
  sessions: number;
  /** Concurrency levels: workers running whole sessions side by side. */
  concurrency: number[];
  /** Bytes of each of the 3 messages per timed append (and of each tool result in the loop). */
  payloadBytes: number;
  /** Timed appends (each beside one floor append). */
  iterations: number;
  /** Timed loop runs (each beside one stateless run); derived from `iterations`. */
  loopIterations: number;
  /** Few iterations and sessions, for CI. */
  quick: boolean;
}

/** The largest message every store must accept (the conformance kit's floor for `maxMessageBytes`). */
export const MAX_PAYLOAD_BYTES = 262_144;

export const BENCH_DEFAULTS = {
  steps: 10,
  sessions: 200,
  concurrency: [1, 8, 32],
  payloadBytes: 300,
  iterations: 200,
} as const;

/** `--quick`: enough samples for a sane p50, few enough that six backends finish in well under a minute. */
export const QUICK_DEFAULTS = { sessions: 16, iterations: 20 } as const;

export class BenchUsageError extends Error {
  readonly code = 'BENCH_USAGE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export type BenchInput = Partial<Omit<BenchOptions, 'loopIterations'>>;

const positiveInteger = (name: string, value: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new BenchUsageError(`--${name} must be a whole number from 1 to ${max}, got ${value}`);
  }
  return value;
};

/** Fills defaults (quick or full) and rejects what cannot be measured. */
export function resolveBenchOptions(input: BenchInput = {}, { forHelp = false } = {}): BenchOptions {
  const quick = input.quick ?? false;
  const targets = input.targets ?? [];
  if (targets.length === 0 && !forHelp) throw new BenchUsageError('--target names no target module');
  const iterations = positiveInteger(
    'iterations',
    input.iterations ?? (quick ? QUICK_DEFAULTS.iterations : BENCH_DEFAULTS.iterations),
  );
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
  const concurrency = input.concurrency ?? [...BENCH_DEFAULTS.concurrency];
  if (concurrency.length === 0) throw new BenchUsageError('--concurrency names no level');
  for (const level of concurrency) positiveInteger('concurrency', level, 1024);
  return {
    targets: [...new Set(targets)],
    steps: positiveInteger('steps', input.steps ?? BENCH_DEFAULTS.steps, 1000),
    sessions: positiveInteger(
      'sessions',
      input.sessions ?? (quick ? QUICK_DEFAULTS.sessions : BENCH_DEFAULTS.sessions),
    ),
    concurrency: [...new Set(concurrency)].sort((a, b) => a - b),
    payloadBytes,
    iterations,
    // A loop is ~2 × steps appends: a fifth as many samples costs about the same again.
    loopIterations: Math.max(5, Math.round(iterations / 5)),
    quick,
  };
}

export const BENCH_USAGE = `Usage: agentstore-bench [options]

Measures what durability costs on each store, on this machine: append latency against the
raw driver's cheapest correct append (the floor), round trips per append, a scripted agent
loop durable vs stateless, steps/s under concurrency, and bytes written per step.

  --target <modules>    target module files, comma-separated (required): the files
                        agentstore-conformance takes; built-in stores publish theirs
                        as @agentstore/<name>/testing. A target module's default export
                        opens its store (and starts its server); its roundTrips counter,
                        floor and notes are what the bench reports.
  --steps <n>           tool steps per scripted session (default ${BENCH_DEFAULTS.steps})
  --sessions <n>        sessions per concurrency level (default ${BENCH_DEFAULTS.sessions}; quick ${QUICK_DEFAULTS.sessions})
  --concurrency <list>  concurrency levels, comma-separated (default ${BENCH_DEFAULTS.concurrency.join(',')})
  --payload <bytes>     bytes per message (default ${BENCH_DEFAULTS.payloadBytes})
  --iterations <n>      timed appends per store (default ${BENCH_DEFAULTS.iterations}; quick ${QUICK_DEFAULTS.iterations})
  --quick               few iterations and sessions (CI)
  --json <file>         write every figure and the machine as JSON
  --chart <file>        write an SVG chart
  --help, -h            show this help

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
    ({ values } = parseCommandLine(argv));
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  const input: BenchInput = { quick: values.quick ?? false };
  if (values.target !== undefined)
    input.targets = list('target', values.target).map((path) => resolve(process.cwd(), path));
  if (values.steps !== undefined) input.steps = integer('steps', values.steps);
  if (values.sessions !== undefined) input.sessions = integer('sessions', values.sessions);
  if (values.concurrency !== undefined) {
    input.concurrency = list('concurrency', values.concurrency).map((level) => integer('concurrency', level));
  }
  if (values.payload !== undefined) input.payloadBytes = integer('payload', values.payload);
  if (values.iterations !== undefined) input.iterations = integer('iterations', values.iterations);
  return {
    help: values.help ?? false,
    options: resolveBenchOptions(input, { forHelp: values.help ?? false }),
    json: values.json ?? null,
    chart: values.chart ?? null,
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
      sessions: { type: 'string' },
      concurrency: { type: 'string' },
      payload: { type: 'string' },
      iterations: { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'string' },
      chart: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
