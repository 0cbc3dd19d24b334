// The published packages of the workspace and how they are packed: shared by `pnpm run pack`
// (tarballs for a user, until the first release) and the consumer test (which installs them).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repo = resolve(import.meta.dirname, '../..');

export interface Manifest {
  name: string;
  version?: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface PublishedPackage {
  dir: string;
  manifest: Manifest;
}

/** Every package of the workspace that is published: packages/*, the kit, the servers and tools/*, not private. */
export function publishedPackages(): PublishedPackage[] {
  const dirs = [
    ...readdirSync(join(repo, 'packages')).map((d) => join(repo, 'packages', d)),
    join(repo, 'conformance'),
    join(repo, 'servers'),
    ...readdirSync(join(repo, 'tools')).map((d) => join(repo, 'tools', d)),
  ];
  return dirs
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
    }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** Runs a command; on failure throws with its output (the caller decides how to report it). */
export function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} (in ${cwd}) exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/**
 * `pnpm pack`s every package into `destination` (`workspace:` ranges become versions npm
 * understands) and returns each package's tarball. Each package must be built (`dist/`).
 */
export function packInto(packages: PublishedPackage[], destination: string): Map<string, string> {
  const unbuilt = packages.filter(({ dir }) => !existsSync(join(dir, 'dist')));
  if (unbuilt.length > 0) {
    throw new Error(
      `${unbuilt.map((p) => p.manifest.name).join(', ')} has no dist/: run \`pnpm run build\` first`,
    );
  }
  mkdirSync(destination, { recursive: true });
  const tarballOf = new Map<string, string>();
  for (const { dir, manifest } of packages) {
    const before = new Set(readdirSync(destination));
    // A tarball of this version packed earlier would not show up as new: replace it.
    const expected = `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`;
    if (before.delete(expected)) rmSync(join(destination, expected));
    sh('pnpm', ['pack', '--pack-destination', destination], dir);
    const made = readdirSync(destination).filter((f) => !before.has(f));
    if (made.length !== 1) throw new Error(`pnpm pack of ${manifest.name} made ${made.length} tarballs`);
    tarballOf.set(manifest.name, join(destination, made[0]!));
  }
  return tarballOf;
}
