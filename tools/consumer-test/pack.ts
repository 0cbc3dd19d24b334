// `pnpm run pack [--out DIR]`: until the first release, how to use agentstore from a clone.
// `pnpm run pack` builds first; this packs every published package into one folder (default
// ./tarballs) and prints the `npm install` lines that install them into an app elsewhere, with
// each package's required peers pinned to the ranges it declares.
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Manifest, packInto, publishedPackages, repo } from './packages.ts';

function parse() {
  try {
    // `pnpm run pack -- --out DIR` passes the `--` through.
    return parseArgs({
      args: process.argv.slice(2).filter((arg) => arg !== '--'),
      options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    process.stderr.write(`pack: ${(error as Error).message}\nusage: pnpm run pack [--out DIR]\n`);
    process.exit(2);
  }
}
const values = parse();
if (values.help) {
  process.stdout.write(
    'usage: pnpm run pack [--out DIR]\n' +
      'Builds and packs every published @agentstore package into DIR (default ./tarballs) and prints\n' +
      'the npm install line for an app outside this repository.\n',
  );
  process.exit(0);
}
const out = resolve(values.out ?? resolve(repo, 'tarballs'));

/** A shell word: quoted when it holds anything a shell would read (`||` in a range, spaces). */
const word = (text: string) => (/^[\w@/.^~:=+-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** Peers npm must install next to a package: the required ones that are not ours, at their declared ranges. */
const requiredPeers = (manifest: Manifest) =>
  Object.entries(manifest.peerDependencies ?? {})
    .filter(([name]) => !name.startsWith('@agentstore/'))
    .filter(([name]) => manifest.peerDependenciesMeta?.[name]?.optional !== true)
    .map(([name, range]) => word(`${name}@${range}`));

try {
  const packages = publishedPackages();
  const tarballOf = packInto(packages, out);
  const tarball = (name: string) => word(tarballOf.get(name)!);
  const inside = relative(process.cwd(), out);
  const shown = inside.startsWith('..') ? out : inside || '.';
  process.stdout.write(`packed ${packages.length} packages into ${shown}/:\n`);
  for (const [name, file] of tarballOf) process.stdout.write(`  ${name}  ${relative(out, file)}\n`);
  process.stdout.write(
    '\nInstall them in your app (outside this repository) with npm, e.g. only what one use needs:\n',
  );
  for (const { manifest } of packages) {
    if (manifest.name === '@agentstore/core') continue;
    // Ours it needs as peers (core, for every package but the servers), then the package itself.
    const ours = Object.keys(manifest.peerDependencies ?? {}).filter(
      (name) => name.startsWith('@agentstore/') && manifest.peerDependenciesMeta?.[name]?.optional !== true,
    );
    const words = [...new Set([...ours, manifest.name])].map(tarball);
    process.stdout.write(
      `  ${manifest.name}:\n    npm install ${[...words, ...requiredPeers(manifest)].join(' ')}\n`,
    );
  }
  const all = packages.flatMap(({ manifest }) => requiredPeers(manifest));
  process.stdout.write(
    `\nEverything:\n  npm install ${[...packages.map(({ manifest }) => tarball(manifest.name)), ...new Set(all)].join(' ')}\n`,
  );
} catch (error) {
  process.stderr.write(`pack: ${(error as Error).message}\n`);
  process.exit(1);
}
