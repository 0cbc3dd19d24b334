#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TARGET_MODULE_ENV } from '@agentstore/core/testing';
import { startVitest } from 'vitest/node';

const USAGE = `Usage: agentstore-conformance <module> [--filter <pattern>]

Runs the agentstore conformance kit against the store a module describes. The module's
default export is a ConformanceTarget ({ name, createStore, destroyStore?, capabilities?,
durable?, maxFloorRatio?, reopen?, multiProcess? }), a function returning one (called again
with \`reopen\` in the process tier's child processes), or a store factory.

  --filter, -t <pattern>  run only the checks whose name matches the pattern
  --help, -h              show this help

Exits 0 when every check passes, 1 when any fails, 2 on a usage error.`;

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const modulePath = resolve(process.cwd(), positionals[0]!);
  if (!existsSync(modulePath)) {
    console.error(`agentstore-conformance: ${modulePath} does not exist`);
    return 2;
  }

  const here = fileURLToPath(import.meta.url);
  // Run from the TypeScript sources (inside this repository) or from the published dist.
  const fromSource = extname(here) === '.ts';
  const packageDir = resolve(dirname(here), '..', '..');
  const suite = join(dirname(here), `conformance-suite${fromSource ? '.ts' : '.js'}`);
  const conditions = fromSource ? ['@agentstore/source', 'module', 'node', 'import', 'default'] : undefined;

  process.env[TARGET_MODULE_ENV] = modulePath;
  const vitest = await startVitest(
    'test',
    [],
    {
      root: packageDir,
      config: false,
      include: [relative(packageDir, suite)],
      exclude: [],
      watch: false,
      passWithNoTests: false,
      // Every check by name: the list is the proof.
      reporters: ['verbose'],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      ...(values.filter ? { testNamePattern: values.filter } : {}),
    },
    {
      // No `dedupe` of @agentstore/core: errors are recognised by `code`, so a user's store built
      // against another installed copy behaves the same.
      ...(conditions ? { resolve: { conditions } } : {}),
      ...(conditions ? { ssr: { resolve: { conditions, externalConditions: ['@agentstore/source'] } } } : {}),
    },
  );
  const failed =
    process.exitCode !== undefined && process.exitCode !== 0
      ? true
      : !vitest || vitest.state.getCountOfFailedTests() > 0 || vitest.state.getUnhandledErrors().length > 0;
  return failed ? 1 : 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      filter: { type: 'string', short: 't' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
