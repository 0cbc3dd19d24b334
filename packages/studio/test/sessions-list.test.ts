// The sessions list as an operator uses it, in headless Chromium over a SQLite file seeded by run().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, openBrowser } from './helpers/browser.ts';
import { seededStudio } from './helpers/studio.ts';

type Seeded = Awaited<ReturnType<typeof seededStudio>>;

let browser: Browser;
let studio: Seeded;

beforeAll(async () => {
  [browser, studio] = await Promise.all([openBrowser(), seededStudio()]);
});
afterAll(async () => {
  await browser?.close();
  await studio?.close();
});

const sessionLinks = () => browser.page.locator('table.sessions tbody td.id a');
const linkTexts = () => sessionLinks().allTextContents();

async function applyFilters(filters: { owner?: string; tenant?: string; agent?: string; status?: string }) {
  const { page } = browser;
  await page.getByLabel('Owner').fill(filters.owner ?? '');
  await page.getByLabel('Tenant').fill(filters.tenant ?? '');
  await page.getByLabel('Agent').fill(filters.agent ?? '');
  await page.getByLabel('Status').selectOption(filters.status ?? '');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator('#page-summary').waitFor();
}

describe('the sessions list', () => {
  it('opens from the printed link, drops the token from the address bar, and pages with the store cursor', async () => {
    const { page } = browser;
    await page.goto(studio.url);
    expect(page.url()).toBe(`${studio.origin}/`);
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await expect.poll(linkTexts).toHaveLength(25);
    const first = await linkTexts();
    expect(first[0]).toBe('batch-00');
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(async () => (await linkTexts())[0]).toBe('batch-25');
    // 30 batch sessions and 8 others: the second page holds the remaining 13.
    expect(await linkTexts()).toEqual([
      'batch-25',
      'batch-26',
      'batch-27',
      'batch-28',
      'batch-29',
      'charge-reconciled',
      'live-1',
      'long-10k',
      'mail-orphan',
      'model-error',
      'payment-pending',
      'refund-ok',
      'vision-1',
    ]);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(async () => (await linkTexts())[0]).toBe('batch-00');
  });

  it('filters by owner, tenant, agent and status, each row showing its status', async () => {
    const { page } = browser;
    await page.goto(`${studio.origin}/`);
    await applyFilters({ owner: 'alice', tenant: 'globex' });
    await expect.poll(linkTexts).toEqual(['charge-reconciled', 'mail-orphan']);
    const orphanRow = page.locator('tr', { has: page.getByRole('link', { name: 'mail-orphan' }) });
    expect(await orphanRow.locator('.badge').textContent()).toBe('interrupted');

    await applyFilters({ agent: 'looper' });
    await expect.poll(linkTexts).toEqual(['long-10k']);

    await applyFilters({ tenant: 'acme', status: 'awaiting-approval' });
    await expect.poll(linkTexts).toEqual(['payment-pending']);

    // The status filter applies within the store's pages: page 1 (25 batch sessions) has none.
    await applyFilters({ status: 'failed' });
    expect(await page.locator('#page-summary').textContent()).toMatch(/^Page 1: 0 shown of 25 listed/);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(linkTexts).toEqual(['model-error']);
    const failedRow = page.locator('tr', { has: page.getByRole('link', { name: 'model-error' }) });
    expect(await failedRow.locator('.badge').textContent()).toBe('failed');

    await applyFilters({ tenant: 'acme', status: 'complete' });
    await expect.poll(linkTexts).toEqual(['long-10k', 'refund-ok', 'vision-1']);
  });

  it('finds a session by id and says so when there is none', async () => {
    const { page } = browser;
    await page.goto(`${studio.origin}/`);
    await page.getByLabel('Session id').fill('mail-orphan');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Session mail-orphan' }).waitFor();
    expect(await page.locator('#session-facts .badge').first().textContent()).toBe('interrupted');

    await page.goto(`${studio.origin}/#/session/no-such-session`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('Session "no-such-session" not found.');
  });
});

describe('a studio scoped to one tenant', () => {
  let scoped: Seeded;
  beforeAll(async () => {
    scoped = await seededStudio({ tenantId: 'globex' });
  });
  afterAll(() => scoped?.close());

  it('lists only that tenant, and a session outside it is not found, in the page and the API', async () => {
    const { page } = browser;
    await page.goto(scoped.url);
    await expect.poll(linkTexts).toEqual(['charge-reconciled', 'mail-orphan']);
    expect(await page.locator('#scope').textContent()).toBe('Scope: tenant globex');
    expect(await page.getByLabel('Tenant').isDisabled()).toBe(true);

    await page.goto(`${scoped.origin}/#/session/refund-ok`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('Session "refund-ok" not found.');

    const headers = { cookie: `agentstore_studio_${scoped.port}=${scoped.token}` };
    for (const path of ['/api/sessions/refund-ok', '/api/sessions/refund-ok/messages']) {
      expect((await fetch(`${scoped.origin}${path}`, { headers })).status).toBe(404);
    }
    const other = await fetch(`${scoped.origin}/api/sessions?tenant=acme`, { headers });
    expect(await other.json()).toEqual({ sessions: [], nextCursor: null, scanned: 0 });
  });
});
