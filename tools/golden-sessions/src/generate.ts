/**
 * Writes this release's golden corpus: `pnpm --filter @agentstore/golden-sessions generate
 * [store…]`. Run once per release, by hand, from a clean checkout; never in CI, and never again
 * for a release whose corpus is committed (see README.md).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import {
  corpusDir,
  type GoldenSession,
  STORES,
  type StoreName,
  type WrittenBy,
  writeJson,
} from './corpus-files.ts';
import { BACKENDS } from './stores/index.ts';
import { writeSessions } from './write-sessions.ts';

const PACKAGE_DIR = new URL('..', import.meta.url).pathname;
const git = (...args: string[]) => execFileSync('git', args, { cwd: PACKAGE_DIR, encoding: 'utf8' }).trim();

function writtenBy(): WrittenBy {
  // The corpus pins what the published packages write: their sources must be a commit.
  const dirty = git('status', '--porcelain', '--', '../../packages');
  if (dirty) throw new Error(`packages/ has uncommitted changes; commit or stash them first:\n${dirty}`);
  const core = JSON.parse(
    readFileSync(new URL('../../../packages/core/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return {
    version: core.version,
    // The last commit that changed the packages that wrote the sessions.
    commit: git('log', '-1', '--format=%H', '--', '../../packages'),
    generatedAt: new Date().toISOString(),
  };
}

/**
 * The sessions with what differs between any two writes taken out (random ids, timestamps):
 * every store must have written the same thing, or one of them would pin its own bug as expected.
 */
const logical = (sessions: GoldenSession[]) =>
  JSON.stringify(sessions)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>');

async function main(names: string[]): Promise<void> {
  const unknown = names.filter((name) => !(STORES as readonly string[]).includes(name));
  if (unknown.length)
    throw new Error(`unknown store(s) ${unknown.join(', ')}; choose from ${STORES.join(', ')}`);
  const stores = (names.length ? names : STORES) as StoreName[];
  const by = writtenBy();
  const release = `${by.version}-${by.commit.slice(0, 7)}`;
  for (const name of stores) {
    const dir = corpusDir(name, release);
    // A committed corpus is history: it is never rewritten (README.md).
    if (existsSync(dir)) throw new Error(`${dir} exists; a release's corpus is written once`);
  }
  let first: { name: StoreName; sessions: string } | null = null;
  for (const name of stores) {
    const dir = corpusDir(name, release);
    const backend = await BACKENDS[name]();
    try {
      const captured = await backend.capture();
      try {
        const sessions = await writeSessions(captured.store);
        first ??= { name, sessions: logical(sessions) };
        if (logical(sessions) !== first.sessions)
          throw new Error(`${name} loaded different sessions from ${first.name}: compare their load results`);
        mkdirSync(dir, { recursive: true });
        try {
          await captured.dump(dir);
          writeJson(dir, 'expected.json', { writtenBy: by, store: name, sessions });
        } catch (error) {
          rmSync(dir, { recursive: true, force: true }); // no half-written corpus
          throw error;
        }
        console.log(`${name}: ${sessions.length} sessions written to ${dir}`);
      } finally {
        await captured.close();
      }
    } finally {
      await backend.stop();
    }
  }
}

await main(process.argv.slice(2));
