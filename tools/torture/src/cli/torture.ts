#!/usr/bin/env node
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport, runTorture } from '../index.ts';

const USAGE = `Usage: agentstore-torture --target <module>[,<module>…] [options]

Crash torture for any agentstore store: runs a multi-step agent in worker processes against the
target a module describes (the same file agentstore-conformance takes; built-in stores publish
theirs as @agentstore/<name>/testing, e.g. node_modules/@agentstore/postgres/dist/testing/index.js),
SIGKILLs them at seeded random moments and resumes in fresh processes until the run
completes; races workers on one crashed session; races lease-less appends from several processes
on one session (the store's own seq check must hold them apart); SIGSTOPs a worker past its lease (fencing);
partitions a lease holder from the database while its handlers run; optionally crash-restarts
the server mid-run. Checks after every trial: no side effect without
retry ran twice, every tool call has one result, every acknowledged message is stored exactly
once with contiguous seqs, the run completes. Every session the torture created is deleted
when it ends. The target must declare \`reopen\` (how another
process opens the same data) and a raw reader.

  --target, -t <modules>  target module files (comma-separated)
  --trials, -n <N>        crash trials per store (default 20)
  --seed <S>              seed for every random choice (default: random, printed)
  --racers <list>         racing scenarios, e.g. 2,8 (default none)
  --race-trials <N>       trials per racer count (default 1)
  --append-race-trials <N> lease-less append races per store (default 1; 0: none)
  --append-racers <N>     processes per append race, 30 appends each (default 3)
  --fence-trials <N>      SIGSTOP fencing trials per store (default 1)
  --partition-trials <N>  trials where the lease holder's renewals hang while its handlers run (default 1)
  --faults                crash-restart the server mid-run (targets with restart())
  --fault-trials <N>      restart trials per store (default 3)
  --concurrency <N>       crash trials at a time (default 1)
  --trial <K>             run only crash trial K (replays a reported violation with its seed)
  --json <file>           also write the full report as JSON
  --help, -h              show this help

Exits 0 when no invariant was violated, 1 when any was, 2 on a usage error.`;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      target: { type: 'string', short: 't' },
      trials: { type: 'string', short: 'n' },
      seed: { type: 'string' },
      racers: { type: 'string' },
      'race-trials': { type: 'string' },
      'append-race-trials': { type: 'string' },
      'append-racers': { type: 'string' },
      'fence-trials': { type: 'string' },
      'partition-trials': { type: 'string' },
      faults: { type: 'boolean' },
      'fault-trials': { type: 'string' },
      concurrency: { type: 'string' },
      trial: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
}

function count(value: string | undefined, fallback: number, name: string, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  let options: Parameters<typeof runTorture>[0];
  let json: string | undefined;
  try {
    const { values } = parse(argv);
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    const targets = (values.target ?? '')
      .split(',')
      .filter(Boolean)
      .map((path) => resolve(process.cwd(), path));
    if (targets.length === 0) throw new Error('--target is required');
    for (const path of targets) if (!existsSync(path)) throw new Error(`${path} does not exist`);
    const racers = (values.racers ?? '')
      .split(',')
      .filter(Boolean)
      .map((n) => count(n, 0, 'racers', 2));
    const trial = values.trial === undefined ? undefined : count(values.trial, 1, 'trial', 1);
    options = {
      targets,
      trials: count(values.trials, 20, 'trials', 1),
      seed: count(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
      racers,
      raceTrials: count(values['race-trials'], 1, 'race-trials', 1),
      appendRaceTrials: count(values['append-race-trials'], 1, 'append-race-trials'),
      appendRacers: count(values['append-racers'], 3, 'append-racers', 2),
      fenceTrials: count(values['fence-trials'], 1, 'fence-trials'),
      partitionTrials: count(values['partition-trials'], 1, 'partition-trials'),
      faults: values.faults ?? false,
      faultTrials: count(values['fault-trials'], 3, 'fault-trials', 1),
      concurrency: count(values.concurrency, 1, 'concurrency', 1),
      ...(trial !== undefined ? { onlyTrial: trial } : {}),
      onProgress: (message) => console.error(message),
    };
    json = values.json;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  console.error(`agentstore-torture: seed ${options.seed}`);
  const report = await runTorture(options);
  console.log(formatReport(report));
  if (json) writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return report.violations.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
