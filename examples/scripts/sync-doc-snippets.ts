// Copies each example file into the docs' ```ts blocks that name it. Run: pnpm --filter @agentstore/examples docs:sync
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { docFiles, syncedMarkdown } from '../src/doc-snippets.ts';

const root = join(import.meta.dirname, '../..');
for (const doc of docFiles(root)) writeFileSync(doc, syncedMarkdown(doc, root));
