import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import * as kit from '../src/index.ts';

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
/** The README's spec table: `| title | \`export\` | \`specs/file.ts\` | what it proves |`. */
const rows = [...readme.matchAll(/^\| ([^|]+) \| `(\w+)` \| `(specs\/[\w-]+\.ts)` \|/gm)].map((m) => ({
  title: m[1],
  name: m[2]!,
  file: m[3],
}));

it('the README lists every spec of the kit, by its title and its one export', () => {
  const exported = Object.entries(kit).filter(([, value]) => kit.conformanceSpecs.includes(value as never));
  expect(exported).toHaveLength(kit.conformanceSpecs.length);
  expect(rows.map((row) => row.title).sort()).toEqual(
    kit.conformanceSpecs.map((spec) => spec.title.replace(' (SIGKILL)', '')).sort(),
  );
  for (const row of rows) {
    const spec = (kit as Record<string, unknown>)[row.name];
    expect(kit.conformanceSpecs, `${row.name} is a spec`).toContain(spec);
    expect((spec as kit.ConformanceSpec).title.startsWith(row.title!), row.name).toBe(true);
  }
});
