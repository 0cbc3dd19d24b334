import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dbPath: string;
  }
}

const SEED = fileURLToPath(new URL('../fixtures/seed-file.ts', import.meta.url));

/** Seeds one SQLite file for every test file, in a process of its own (workspace sources, real run()s). */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-studio-'));
  const dbPath = join(dir, 'studio.db');
  execFileSync(process.execPath, ['--conditions=@agentstore/source', SEED, dbPath], { stdio: 'inherit' });
  project.provide('dbPath', dbPath);
  return () => rmSync(dir, { recursive: true, force: true });
}
