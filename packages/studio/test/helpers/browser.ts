import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run); nothing downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, one page at 1280×800. */
export async function openBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); tests never download a browser`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'agentstore-studio-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core (from npm) in the page. Evaluated through the DevTools protocol, so the page's
 * own CSP (script-src 'self') stays on. Returns the serious and critical violations.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(`${axeSource}\n;void 0`);
  const { violations, passes } = (await page.evaluate(
    'axe.run(document).then((r) => ({ violations: r.violations, passes: r.passes.length }))',
  )) as { violations: AxeViolation[]; passes: number };
  // A run that checked nothing (axe not loaded, an empty page) must not pass as clean.
  if (passes === 0) throw new Error('axe-core checked no rule on this page');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
