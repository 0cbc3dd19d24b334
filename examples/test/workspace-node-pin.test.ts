import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

it("pnpm checks engines against the Node the workspace runs on: pnpm-workspace.yaml's nodeVersion is the root's node pin", () => {
  const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    engines: { node: string };
    devDependencies: Record<string, string>;
  };
  const nodeVersion = /^nodeVersion: (\S+)$/m.exec(workspace)?.[1];
  expect(nodeVersion).toBe(manifest.devDependencies.node);
  expect(workspace).toMatch(/^engineStrict: true$/m);
  // And it is a Node the packages accept (engines ">=22.12").
  const [major, minor] = nodeVersion!.split('.').map(Number);
  const [, needMajor, needMinor] = /^>=(\d+)\.(\d+)$/.exec(manifest.engines.node)!.map(Number);
  expect(major! > needMajor! || (major === needMajor && minor! >= needMinor!)).toBe(true);
  // The process running this test is that Node too.
  expect(process.versions.node).toBe(nodeVersion);
});
