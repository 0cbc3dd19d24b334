// The page ships in the package, small, and loads nothing from anywhere else (no CDN).
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';

const dir = (path: string) => new URL(path, import.meta.url);
const files = [
  ...readdirSync(dir('../dist/client/')).map((f) => dir(`../dist/client/${f}`)),
  ...readdirSync(dir('../public/')).map((f) => dir(`../public/${f}`)),
];

it('is under 40 KB (docs/studio.md states its size) and names no other origin', () => {
  const contents = files.map((f) => readFileSync(f));
  const bytes = contents.reduce((sum, c) => sum + c.length, 0);
  expect(bytes).toBeLessThan(40_000);
  expect(gzipSync(Buffer.concat(contents)).length).toBeLessThan(12_000);
  for (const [i, c] of contents.entries()) {
    expect(c.toString('utf8'), String(files[i])).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
  }
});
