// A running session's timeline follows a separate worker process that appends to the same file.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { LIVE_SESSION } from './fixtures/seed.ts';
import { type Browser, openBrowser } from './helpers/browser.ts';
import { seededStudio } from './helpers/studio.ts';

const WORKER = fileURLToPath(new URL('fixtures/live-worker.ts', import.meta.url));

let browser: Browser;
let studio: Awaited<ReturnType<typeof seededStudio>>;

beforeAll(async () => {
  [browser, studio] = await Promise.all([openBrowser(), seededStudio()]);
});
afterAll(async () => {
  await browser?.close();
  await studio?.close();
});

it('shows the session advance and run while another process appends, then complete', async () => {
  const { page } = browser;
  await page.goto(studio.url);
  await page.goto(`${studio.origin}/#/session/${LIVE_SESSION}`);
  const facts = page.locator('#session-facts');
  await facts.waitFor();
  expect(await facts.textContent()).toContain('Head seq2');
  expect(await page.locator('[role="option"]').count()).toBe(2);

  const worker = spawn(process.execPath, ['--conditions=@agentstore/source', WORKER, inject('dbPath')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
  const out = createInterface({ input: worker.stdout! })[Symbol.asyncIterator]();
  try {
    // The worker committed the user message and the call, and its handler is running.
    expect((await out.next()).value).toBe('started');
    await expect.poll(() => facts.textContent(), { timeout: 20_000 }).toContain('Head seq4');
    expect(await facts.locator('.badge').textContent()).toBe('running');
    expect(await facts.textContent()).toMatch(/Leaseheld by .+ \(epoch \d+\) until /);
    expect(await page.locator('#msg-4').textContent()).toContain('wait');
    // The list says the same: running, with the holder and the lease's expiry.
    const cookie = `agentstore_studio_${studio.port}=${studio.token}`;
    const listed = (await (
      await fetch(`${studio.origin}/api/sessions?tenant=umbrella`, { headers: { cookie } })
    ).json()) as { sessions: { status: string; lease: { holder: string; expiresAt: string } | null }[] };
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]!.status).toBe('running');
    expect(Date.parse(listed.sessions[0]!.lease!.expiresAt)).toBeGreaterThan(Date.now());

    worker.stdin!.write('go\n');
    expect((await out.next()).value).toBe('done');
    expect(await exited).toBe(0);
    await expect.poll(() => facts.textContent(), { timeout: 20_000 }).toContain('Head seq6');
    await expect.poll(() => facts.locator('.badge').textContent()).toBe('complete');
    // Following the head: the newest message is in view.
    await page.locator('#msg-6').waitFor();
    expect(await page.locator('#msg-5').textContent()).toContain('handler, attempt 1');
  } finally {
    worker.kill();
  }
});
