// Keyboard, labels and contrast checked by axe-core in the page; readable at 1280×800 and at a
// phone's 390×844, light and dark. Writes the screenshots docs/studio.md shows when
// AGENTSTORE_WRITE_SCREENSHOTS=1 (pnpm --filter @agentstore/studio screenshots); otherwise into a
// temp folder, so a test run leaves the checkout clean.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, openBrowser, seriousAxeViolations } from './helpers/browser.ts';
import { seededStudio } from './helpers/studio.ts';

const SHOTS =
  process.env.AGENTSTORE_WRITE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../docs/studio/', import.meta.url))
    : `${mkdtempSync(join(tmpdir(), 'agentstore-studio-shots-'))}/`;

let browser: Browser;
let studio: Awaited<ReturnType<typeof seededStudio>>;

beforeAll(async () => {
  [browser, studio] = await Promise.all([openBrowser(), seededStudio()]);
  mkdirSync(SHOTS, { recursive: true });
  await browser.page.goto(studio.url);
});
afterAll(async () => {
  await browser?.close();
  await studio?.close();
});

/** The docs show these; the other combinations are checked the same way. */
const DOC_SHOTS = new Set([
  'sessions-light-desktop',
  'session-light-desktop',
  'session-dark-desktop',
  'session-light-phone',
]);

async function shoot(name: string) {
  if (DOC_SHOTS.has(name)) await browser.page.screenshot({ path: `${SHOTS}${name}.png` });
}

async function showList() {
  await browser.page.goto(`${studio.origin}/`);
  await browser.page.locator('table.sessions').waitFor();
}

async function showSession(id: string, seq: number) {
  const { page } = browser;
  await page.goto(`${studio.origin}/#/session/${id}`);
  await page.locator(`#msg-${seq}`).click();
  await page.locator('#message-detail h2', { hasText: `#${seq} ` }).waitFor();
}

/** Nothing is wider than the viewport: no sideways scrolling to read a page. */
const overflowsSideways = () =>
  browser.page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe.each(['light', 'dark'] as const)('in %s mode', (colorScheme) => {
  beforeAll(() => browser.page.emulateMedia({ colorScheme }));

  for (const [width, height, device] of [
    [1280, 800, 'desktop'],
    [390, 844, 'phone'],
  ] as const) {
    it(`the list and a session have no serious axe violations and fit a ${device} (${width}×${height})`, async () => {
      const { page } = browser;
      await page.setViewportSize({ width, height });
      await showList();
      // The second page holds sessions in every state.
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByRole('link', { name: 'mail-orphan' }).waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(await overflowsSideways()).toBe(false);
      await shoot(`sessions-${colorScheme}-${device}`);
      await showSession('refund-ok', 3);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(await overflowsSideways()).toBe(false);
      await shoot(`session-${colorScheme}-${device}`);
    });
  }
});

describe('keyboard', () => {
  it('reaches the filters, a session, its timeline and moves through messages without a mouse', async () => {
    const { page } = browser;
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    await showList();
    // The first Tab lands on the skip link, which moves focus to the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    // Tab through the find form and the filters to the first session link.
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    const labels: string[] = [];
    for (let i = 0; i < 12 && !(await focused()).startsWith('batch-'); i++) {
      await page.keyboard.press('Tab');
      labels.push(
        await page.evaluate(
          () =>
            (document.activeElement as HTMLElement | null)?.getAttribute('name') ??
            document.activeElement?.textContent ??
            '',
        ),
      );
    }
    expect(labels).toEqual(
      expect.arrayContaining(['id', 'Open', 'owner', 'tenant', 'agent', 'status', 'Apply filters']),
    );
    expect(await focused()).toBe('batch-00');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Session batch-00' }).waitFor();
    // Tab to the timeline (after the back link, the as-of field and its button).
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.getAttribute('role') === 'listbox')) break;
    }
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Messages, oldest first',
    );
    await page.keyboard.press('Home');
    await page.locator('#message-detail h2', { hasText: '#1 user' }).waitFor();
    await page.keyboard.press('End');
    await page.locator('#message-detail h2', { hasText: '#2 assistant' }).waitFor();
  });
});
