import { existsSync, rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { launchD1, tempDir } from '../src/index.ts';

it('launchD1 serves a D1 database and the worker beside it, and a persisted database outlives the engine', async () => {
  const dir = tempDir('d1-launcher');
  try {
    const first = await launchD1({ persist: dir });
    try {
      await first.info.db.exec('CREATE TABLE notes (body TEXT NOT NULL)');
      await first.info.db.prepare('INSERT INTO notes (body) VALUES (?)').bind('kept').run();
      const answer = await first.info.miniflare.dispatchFetch('http://worker/');
      expect(await answer.text()).toBe('ok');
    } finally {
      await first.stop();
    }
    expect(existsSync(dir)).toBe(true);

    const second = await launchD1({ persist: dir });
    try {
      const row = await second.info.db.prepare('SELECT body FROM notes').first<{ body: string }>();
      expect(row).toEqual({ body: 'kept' });
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
