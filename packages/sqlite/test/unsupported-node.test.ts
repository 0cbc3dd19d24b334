import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unsupportedNodeError } from '../src/node-guard.ts';

const packageDir = join(import.meta.dirname, '..');

/** Imports `entry` in a Node that reports version 20.20.2, and says what happened. */
function importUnderOldNode(entry: string) {
  const program = `import(${JSON.stringify(entry)}).then(
    () => console.log('imported'),
    (e) => console.log(JSON.stringify({ code: e.code, problem: e.problem, message: e.message })),
  );`;
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=@agentstore/source',
      '--import',
      join(import.meta.dirname, 'fixtures/old-node-preload.mjs'),
      '--input-type=module',
      '-e',
      program,
    ],
    { cwd: packageDir, encoding: 'utf8' },
  );
  return { status: result.status, signal: result.signal, lines: result.stdout.trim().split('\n') };
}

describe('on a Node older than 22.12', () => {
  it.each(['@agentstore/sqlite', '@agentstore/sqlite/testing'])(
    'importing %s is a typed STORE_CONFIGURATION error before better-sqlite3 is loaded',
    (entry) => {
      const { status, signal, lines } = importUnderOldNode(entry);
      expect(signal).toBeNull();
      expect(status).toBe(0);
      const error = JSON.parse(lines[0]!) as { code: string; problem: string; message: string };
      expect(error).toMatchObject({ code: 'STORE_CONFIGURATION', problem: 'unsupported-node' });
      expect(error.message).toContain('needs Node.js >= 22.12, but this is Node.js 20.20.2');
      expect(error.message).toContain('Fix: run your app with Node.js 22 LTS or newer');
      expect(lines[1]).toBe('better-sqlite3 loaded: false');
    },
  );

  it('the check itself: the engines floor and newer pass, older Nodes are refused', () => {
    for (const version of ['22.12.0', '22.23.3', '24.0.0']) expect(unsupportedNodeError(version)).toBeNull();
    for (const version of ['20.20.2', '22.11.0', '18.19.1']) {
      expect(unsupportedNodeError(version)).toMatchObject({
        code: 'STORE_CONFIGURATION',
        store: '@agentstore/sqlite',
      });
    }
  });
});
