// Facts the docs state in numbers or names, read from the docs and checked against the code, so a
// change to one without the other fails here rather than misleading a reader.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type AgentStore, defineAgent, memoryStore, run, tool } from '@agentstore/core';
import { durableMemoryStore, scriptedLlm } from '@agentstore/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

const root = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Every Markdown page a user reads: README, docs/*.md, each package's README. */
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...['packages', 'tools'].flatMap((dir) => readdirSync(join(root, dir)).map((p) => `${dir}/${p}/README.md`)),
  'conformance/README.md',
  'servers/README.md',
].filter((path) => {
  try {
    read(path);
    return true;
  } catch {
    return false;
  }
});

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
];

describe('the store contract the docs describe', () => {
  const methods = Object.entries(memoryStore())
    .filter(([, value]) => typeof value === 'function')
    .map(([name]) => name)
    .sort();

  it("every page that counts the store methods gives the contract's number, and a list names each one", () => {
    let statements = 0;
    for (const path of pages) {
      for (const match of read(path).matchAll(/\b(\w+) (?:async )?methods\b( \(([^)]*)\))?/g)) {
        const count = NUMBER_WORDS.indexOf(match[1]!.toLowerCase());
        if (count < 0) continue;
        statements += 1;
        expect(`${path}: ${match[0].split(' (')[0]}`).toBe(
          `${path}: ${NUMBER_WORDS[methods.length]}${match[0].slice(match[1]!.length).split(' (')[0]}`,
        );
        if (match[3] !== undefined) {
          const listed = [...match[3].matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
          expect(listed, path).toEqual(methods);
        }
      }
    }
    expect(statements).toBeGreaterThanOrEqual(1);
  });
});

describe('links', () => {
  it('every relative link on a page names a file that exists', () => {
    const broken: string[] = [];
    for (const path of pages) {
      // Code blocks hold shell and TypeScript, not links.
      const text = read(path).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const file = join(root, dirname(path), decodeURI(target!.split('#')[0]!));
        if (!existsSync(file)) broken.push(`${path}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('install lines', () => {
  /** Every peer an @agentstore package declares (optional ones too), with its ranges. */
  const peerRanges = new Map<string, string[]>();
  for (const dir of ['packages', 'tools']
    .flatMap((d) => readdirSync(join(root, d)).map((p) => `${d}/${p}`))
    .concat(['conformance', 'servers'])) {
    let manifest: { name: string; private?: boolean; peerDependencies?: Record<string, string> };
    try {
      manifest = JSON.parse(read(`${dir}/package.json`));
    } catch {
      continue;
    }
    if (manifest.private) continue;
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (!name.startsWith('@agentstore/')) peerRanges.set(name, [...(peerRanges.get(name) ?? []), range]);
    }
  }
  // The majors a range admits: `^8.13.0` → 8, `^5.4.0 || ^6.0.0` → 5 and 6.
  const majors = (range: string) => [...range.matchAll(/\^(\d+)/g)].map((m) => Number(m[1]));

  it('pin every peer they install to a version the packages accept (npm on an older Node picks an older major)', () => {
    let checked = 0;
    for (const path of pages) {
      for (const line of read(path).matchAll(/\bnpm (?:install|i)\b([^`\n]*)/g)) {
        for (const spec of line[1]!.split('#')[0]!.trim().split(/\s+/)) {
          if (spec.startsWith('-')) continue;
          const at = spec.indexOf('@', 1);
          const name = at < 0 ? spec : spec.slice(0, at);
          const ranges = peerRanges.get(name);
          if (ranges === undefined) continue;
          checked += 1;
          expect(at, `${path}: ${name} in "npm install${line[1]}" has no version`).toBeGreaterThan(0);
          const pinned = majors(spec.slice(at + 1))[0];
          for (const range of ranges)
            expect(majors(range), `${path}: ${spec} vs peer ${range}`).toContain(pinned);
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});

describe('lease renewal, as docs/durability.md and the core README state it', () => {
  afterEach(() => vi.useRealTimers());

  it('renews every quarter of the TTL while a handler works', async () => {
    expect(read('docs/durability.md')).toContain('renews it every quarter of the TTL');
    expect(read('packages/core/README.md')).toContain('renews it every `leaseTtlMs / 4`');
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
    const inner = durableMemoryStore();
    let renewals = 0;
    const store: AgentStore = {
      ...inner,
      renewLease: (id, input) => {
        renewals += 1;
        return inner.renewLease(id, input);
      },
    };
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish!: () => void;
    const agent = defineAgent({
      name: 'renewals',
      instructions: '',
      tools: {
        work: tool({
          description: 'works until told to stop',
          input: z.object({}),
          safeToRetry: true,
          handler: () =>
            new Promise<string>((resolve) => {
              finish = () => resolve('done');
              started();
            }),
        }),
      },
    });
    const ttl = 4_000;
    const result = run(agent, {
      store,
      sessionId: 'renewals',
      message: 'work',
      leaseTtlMs: ttl,
      llm: scriptedLlm([{ toolCalls: [{ name: 'work', input: {} }] }, { text: 'finished' }]),
    });
    await handlerStarted;
    const before = renewals;
    // Ten and a half quarters of the TTL: ten renewals at TTL/4 (seven at TTL/3, five at TTL/2).
    await vi.advanceTimersByTimeAsync(ttl * 2.625);
    expect(renewals - before).toBe(10);
    finish();
    await expect(result).resolves.toMatchObject({ status: 'complete', response: 'finished' });
  });
});
