import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, snippetsOf, syncedMarkdown, uncheckedBlocks } from '../src/doc-snippets.ts';

const root = join(import.meta.dirname, '../..');

describe('docs code blocks are type-checked example files', () => {
  const docs = docFiles(root);

  it('finds the docs', () => {
    expect(docs.length).toBeGreaterThan(0);
  });

  it.each(docs.map((d) => [d.slice(root.length + 1), d]))(
    '%s: every ts block names a type-checked file and equals it',
    (_, doc) => {
      expect(uncheckedBlocks(doc)).toBe(0);
      for (const snippet of snippetsOf(doc)) expect(snippet.file.startsWith('examples/src/docs/')).toBe(true);
      expect(readFileSync(doc, 'utf8')).toBe(syncedMarkdown(doc, root));
    },
  );
});
