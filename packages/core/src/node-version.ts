/**
 * The Node.js version every agentstore bin needs: the `engines` field of every package. The bins
 * check it before importing anything else, because on an older Node they fail later and
 * obscurely (`Map.groupBy is not a function`; better-sqlite3 13 segfaults on Node 20).
 */
export const REQUIRED_NODE = { major: 22, minor: 12 } as const;

/** Why `version` (e.g. `process.versions.node`) cannot run agentstore, or null when it can. */
export function nodeVersionProblem(bin: string, version: string, execPath = ''): string | null {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const { major: needMajor, minor: needMinor } = REQUIRED_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return (
    `${bin} needs Node.js >= ${needMajor}.${needMinor}, but this is Node.js ${version}` +
    `${execPath ? ` (${execPath})` : ''}.\n` +
    `Install Node.js ${needMajor} LTS or newer (https://nodejs.org, or \`nvm install ${needMajor}\`, ` +
    `or \`fnm install ${needMajor}\`) and run ${bin} with it; inside the agentstore repository, ` +
    `\`pnpm exec ${bin}\` uses the Node ${needMajor} the workspace pins.\n`
  );
}

/** Exits with code 1 and the reason when this process's Node.js is too old for `bin`. */
export function requireNode(bin: string): void {
  const problem = nodeVersionProblem(bin, process.versions.node, process.execPath);
  if (problem === null) return;
  process.stderr.write(problem);
  process.exit(1);
}
