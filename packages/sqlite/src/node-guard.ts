// Imported first by every entry of this package: better-sqlite3 13 segfaults on Node < 22.12 the
// moment a database is opened, killing the process with no message. Refuse such a Node with a
// typed error before better-sqlite3 is loaded.
import { StoreConfigurationError } from '@agentstore/core';
import { REQUIRED_NODE } from '@agentstore/core/node-version';

/** The error this package throws on `version` (e.g. `process.versions.node`), or null when it runs. */
export function unsupportedNodeError(version: string): StoreConfigurationError | null {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const { major: needMajor, minor: needMinor } = REQUIRED_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return new StoreConfigurationError({
    store: '@agentstore/sqlite',
    problem: 'unsupported-node',
    detail:
      `needs Node.js >= ${needMajor}.${needMinor}, but this is Node.js ${version}: its SQLite driver ` +
      '(better-sqlite3 13) crashes the process on an older Node.',
    fix: `run your app with Node.js ${needMajor} LTS or newer (https://nodejs.org, \`nvm install ${needMajor}\`).`,
  });
}

const problem = unsupportedNodeError(process.versions.node);
if (problem !== null) throw problem;
