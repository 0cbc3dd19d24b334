import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from '@agentstore/sqlite';
import BetterSqlite3 from 'better-sqlite3';
import { type CorpusBackend, freshName } from './backend.ts';

/** The corpus is the database file itself, as the store left it (its WAL checkpointed in). */
export const SQLITE_FILE = 'sessions.sqlite';

export async function sqliteBackend(): Promise<CorpusBackend> {
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-golden-sqlite-'));
  return {
    async capture() {
      const path = join(dir, `capture-${freshName()}.db`);
      const store = sqliteStore({ path });
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await store.close();
      };
      return {
        store,
        async dump(into) {
          await close();
          // Fold any WAL frames into the main file, so the file alone is the whole database.
          const db = new BetterSqlite3(path);
          db.pragma('wal_checkpoint(TRUNCATE)');
          db.close();
          if (existsSync(`${path}-wal`)) throw new Error(`${path}-wal is still there after the checkpoint`);
          copyFileSync(path, join(into, SQLITE_FILE));
        },
        close,
      };
    },
    async restore(from) {
      const path = join(dir, `restore-${freshName()}.db`);
      copyFileSync(join(from, SQLITE_FILE), path);
      // Opening runs the current migrations, as a user's upgraded process would.
      const store = sqliteStore({ path });
      await store.migrate();
      return { store, close: () => store.close() };
    },
    async stop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
