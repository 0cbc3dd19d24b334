import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every ```ts block in the docs starts with the path of the example file it must equal. */
const BLOCK = /```ts\n(\/\/ (examples\/src\/docs\/[\w./-]+\.ts)\n[\s\S]*?)```/g;

export interface DocSnippet {
  doc: string;
  file: string;
  /** The block as it stands in the markdown. */
  block: string;
}

export function docFiles(repoRoot: string): string[] {
  const dir = join(repoRoot, 'docs');
  return (
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      // docs/api is generated from TSDoc by typedoc; its signatures are not example files.
      .filter((name) => name.endsWith('.md') && !name.startsWith('api/'))
      .map((name) => join(dir, name))
  );
}

export function snippetsOf(markdownPath: string): DocSnippet[] {
  const text = readFileSync(markdownPath, 'utf8');
  return [...text.matchAll(BLOCK)].map((m) => ({ doc: markdownPath, file: m[2]!, block: m[1]! }));
}

/** ```ts blocks that do not name an example file: code that nothing type-checks. */
export function uncheckedBlocks(markdownPath: string): number {
  const text = readFileSync(markdownPath, 'utf8');
  const all = text.match(/```ts\n/g)?.length ?? 0;
  return all - snippetsOf(markdownPath).length;
}

/** Rewrites every named block from its file. */
export function syncedMarkdown(markdownPath: string, repoRoot: string): string {
  return readFileSync(markdownPath, 'utf8').replace(BLOCK, (_, _body: string, file: string) => {
    return `\`\`\`ts\n${readFileSync(join(repoRoot, file), 'utf8')}\`\`\``;
  });
}
