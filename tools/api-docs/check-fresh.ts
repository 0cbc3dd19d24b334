// Fails when the committed docs/api differs from what typedoc generates from the sources now:
// the API reference is committed, so CI checks that it is current. Fix: `pnpm --filter
// @agentstore/api-docs docs:api` and commit docs/api.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const here = import.meta.dirname;
const committed = join(here, '../../docs/api');
const fresh = mkdtempSync(join(tmpdir(), 'agentstore-api-docs-'));

const files = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
        .sort()
    : [];

try {
  const typedoc = spawnSync(
    'pnpm',
    ['exec', 'typedoc', '--options', 'typedoc.json', '--out', fresh, '--logLevel', 'Warn'],
    {
      cwd: here,
      encoding: 'utf8',
    },
  );
  if (typedoc.status !== 0) {
    process.stderr.write(`typedoc failed:\n${typedoc.stdout}${typedoc.stderr}`);
    process.exit(1);
  }
  const want = files(fresh);
  const have = new Set(files(committed));
  const stale = [
    ...want.filter((f) => !have.has(f)).map((f) => `missing: docs/api/${f}`),
    ...[...have].filter((f) => !want.includes(f)).map((f) => `no longer generated: docs/api/${f}`),
    ...want
      .filter(
        (f) =>
          have.has(f) && readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(committed, f), 'utf8'),
      )
      .map((f) => `out of date: docs/api/${f}`),
  ];
  if (stale.length > 0) {
    process.stderr.write(
      `docs/api is not current (${stale.length} files):\n${stale.slice(0, 30).join('\n')}${stale.length > 30 ? '\n…' : ''}\n` +
        'Regenerate it with `pnpm --filter @agentstore/api-docs docs:api` and commit docs/api.\n',
    );
    process.exit(1);
  }
  process.stdout.write(`docs/api is current (${want.length} files)\n`);
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
