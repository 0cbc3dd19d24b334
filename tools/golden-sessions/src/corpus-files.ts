import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from '@agentstore/core';

/** Where a session was left: answered, crashed after write #1, or waiting for a human. */
export type EndState = 'complete' | 'interrupted' | 'awaiting-approval';

/** One session of a corpus as the code that wrote it loaded it, right after writing it. */
export interface GoldenSession {
  scenario: string;
  sessionId: string;
  end: EndState;
  /** The last run's `response` ('' for a session whose only run crashed). */
  answer: string;
  /** The tools whose handlers ran while it was written, in order. */
  handlerCalls: string[];
  load: LoadResult;
}

/** `expected.json` of one store's corpus. */
export interface ExpectedFile {
  writtenBy: WrittenBy;
  store: string;
  sessions: GoldenSession[];
}

export interface WrittenBy {
  /** The release of @agentstore/core and the commit the corpus was generated from. */
  version: string;
  commit: string;
  generatedAt: string;
}

export const CORPUS_ROOT = new URL('../corpus/', import.meta.url).pathname;

export const STORES = ['sqlite', 'postgres', 'redis', 'dynamodb', 'd1'] as const;
export type StoreName = (typeof STORES)[number];

/** `corpus/<store>/<release>/`: every release adds a directory beside the earlier ones. */
export const corpusDir = (store: StoreName, release: string) => join(CORPUS_ROOT, store, release);

/** Every release's corpus of `store`, oldest name first (a missing store directory throws). */
export function releasesOf(store: StoreName): string[] {
  return readdirSync(join(CORPUS_ROOT, store), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

export const readJson = <T>(dir: string, file: string): T =>
  JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;

/** Stable, reviewable JSON: two-space indent, trailing newline; `\u0000` stays escaped. */
export const writeJson = (dir: string, file: string, value: unknown) =>
  writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`);
