// A session's timeline as an on-call engineer reads it: results with their origin, attempt and
// idempotency key, interrupted calls, parts, a past seq, a 10,000-message session; by keyboard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_MESSAGES, LONG_SESSION } from './fixtures/seed.ts';
import { type Browser, openBrowser } from './helpers/browser.ts';
import { seededStudio } from './helpers/studio.ts';

let browser: Browser;
let studio: Awaited<ReturnType<typeof seededStudio>>;

beforeAll(async () => {
  [browser, studio] = await Promise.all([openBrowser(), seededStudio()]);
  await browser.page.goto(studio.url);
});
afterAll(async () => {
  await browser?.close();
  await studio?.close();
});

const detail = () => browser.page.locator('#message-detail');
const row = (seq: number) => browser.page.locator(`#msg-${seq}`);

async function openSession(id: string, at?: number) {
  const { page } = browser;
  await page.goto(
    `${studio.origin}/#/session/${encodeURIComponent(id)}${at === undefined ? '' : `?at=${at}`}`,
  );
  await page.getByRole('heading', { name: `Session ${id}` }).waitFor();
}

async function selectRow(seq: number) {
  await row(seq).click();
  await detail()
    .getByRole('heading', { name: new RegExp(`^#${seq} `) })
    .waitFor();
}

const fact = (name: string) =>
  detail().locator('dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');

describe('a session timeline', () => {
  it('shows each result with its origin, attempt and the idempotency key its handler got', async () => {
    await openSession('refund-ok');
    await selectRow(3);
    expect(await fact('Origin').textContent()).toBe('handler ran');
    expect(await fact('Attempt').textContent()).toBe('1');
    const key = (await fact('Idempotency key').textContent()) ?? '';
    expect(key).toMatch(/^agentstore_[0-9a-f]{64}$/);
    // The handler returned its ctx.idempotencyKey: the stored result proves the page shows that key
    // (the session's incarnation included).
    expect(await detail().locator('pre').first().textContent()).toContain(key);

    await selectRow(2);
    const call = detail().locator('.call', { hasText: 'refund' });
    expect(await call.locator('pre').textContent()).toBe(
      JSON.stringify({ orderId: '7', cents: 1200 }, null, 2),
    );
    expect(await call.textContent()).toContain(`Idempotency key: ${key}`);
    expect(await call.textContent()).toContain('Result #3: handler, attempt 1');
  });

  it('shows a reconciled result, and an interrupted call stands out', async () => {
    await openSession('charge-reconciled');
    await selectRow(3);
    expect(await fact('Origin').textContent()).toBe('reconciled (reconcile found the effect had happened)');

    await openSession('mail-orphan');
    expect(await browser.page.locator('#session-facts').textContent()).toContain(
      'Interrupted callssendMail-1',
    );
    // Rows render at once as placeholders; the messages arrive with their page.
    await expect.poll(() => row(2).textContent()).toContain('sendMail — INTERRUPTED');
    expect(await row(2).getAttribute('class')).toContain('interrupted');
    await selectRow(2);
    expect(await detail().locator('.call.interrupted').textContent()).toContain('INTERRUPTED: no result');
  });

  it('shows the calls a session waits on a human for', async () => {
    await openSession('payment-pending');
    const facts = browser.page.locator('#session-facts');
    expect(await facts.locator('.badge').first().textContent()).toBe('awaiting approval');
    expect(await facts.textContent()).toContain('Awaiting approvalpay-1');
    await expect.poll(() => row(2).textContent()).toContain('pay');
  });

  it('shows reasoning collapsed, a stored image, and the model and usage of the step', async () => {
    await openSession('vision-1');
    await selectRow(2);
    const reasoning = detail().locator('details');
    expect(await reasoning.getAttribute('open')).toBeNull();
    expect(await reasoning.locator('summary').textContent()).toMatch(/^Reasoning \(\d+ characters\)$/);
    expect(await reasoning.locator('pre').isVisible()).toBe(false);
    await reasoning.locator('summary').click();
    expect(await reasoning.locator('pre').textContent()).toBe(
      'The invoice lists order 7 twice; compare the dates.',
    );
    const image = detail().getByRole('img', { name: 'chart.png (stored image)' });
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
    expect(await fact('Usage').textContent()).toBe('120 in · 40 out · 25 reasoning · scripted-reasoner-1');
    // A PDF opens on request, from the stored bytes (a blob URL; nothing is fetched elsewhere).
    await detail()
      .getByRole('button', { name: /^Open PDF/ })
      .click();
    const frame = detail().locator('iframe[title="invoice.pdf preview"]');
    expect(await frame.getAttribute('src')).toMatch(/^blob:http:\/\/127\.0\.0\.1:\d+\//);
  });

  it('views the session as of an earlier seq: later messages and results are not there', async () => {
    await openSession('refund-ok');
    await browser.page.getByLabel('View as of seq').fill('2');
    await browser.page.getByRole('button', { name: 'View' }).click();
    await expect.poll(() => browser.page.locator('[role="option"]').count()).toBe(2);
    expect(browser.page.url()).toBe(`${studio.origin}/#/session/refund-ok?at=2`);
    const facts = browser.page.locator('#session-facts');
    expect(await facts.textContent()).toContain('Head seq2 (head today 4)');
    expect(await facts.textContent()).toContain('not known at seq 2');
    await selectRow(2);
    expect(await detail().locator('.call').textContent()).toContain('no result at this seq');
  });

  it('pages a 10,000-message session from the store and renders only the rows in view', async () => {
    const { page } = browser;
    const fetched: { afterSeq: number; limit: number }[] = [];
    const onRequest = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname.endsWith('/messages') && url.searchParams.has('limit'))
        fetched.push({
          afterSeq: Number(url.searchParams.get('afterSeq')),
          limit: Number(url.searchParams.get('limit')),
        });
    };
    page.on('request', onRequest);
    try {
      await openSession(LONG_SESSION);
      // Opens at the head: the last message is selected and shown.
      await detail()
        .getByRole('heading', { name: `#${LONG_MESSAGES} assistant` })
        .waitFor();
      const options = page.locator('[role="option"]');
      expect(await options.first().getAttribute('aria-setsize')).toBe(String(LONG_MESSAGES));
      expect(await options.count()).toBeLessThan(60);
      // The timeline is one tab stop; Home jumps to the first message, fetched on demand.
      await page.locator('[role="listbox"]').focus();
      await page.keyboard.press('Home');
      await detail().getByRole('heading', { name: '#1 user' }).waitFor();
      await page.keyboard.press('ArrowDown');
      await detail().getByRole('heading', { name: '#2 assistant' }).waitFor();
      expect(await page.locator('[role="listbox"]').getAttribute('aria-activedescendant')).toBe('msg-2');
      await page.keyboard.press('PageDown');
      expect(await page.locator('[role="listbox"]').getAttribute('aria-activedescendant')).not.toBe('msg-2');
      expect(await options.count()).toBeLessThan(60);
      // Only pages near what was shown came from the store, never the whole session.
      expect(fetched.every((f) => f.limit <= 200)).toBe(true);
      expect(fetched.length).toBeLessThanOrEqual(4);
    } finally {
      page.off('request', onRequest);
    }
  });
});
