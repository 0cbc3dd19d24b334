import { d1Store } from '@agentstore/d1';
import { type D1DatabaseHandle, launchD1 } from '@agentstore/servers';
import { readJson, writeJson } from '../corpus-files.ts';
import type { CorpusBackend } from './backend.ts';

const DUMP_FILE = 'database.json';

/** A cell with SQLite's storage class, its value as text (integers exact, whatever their size). */
type Cell = ['null'] | ['integer' | 'text', string];

interface DatabaseDump {
  /** `sqlite_master`'s statements in creation order (tables, then their indexes). */
  schema: { type: string; name: string; sql: string }[];
  tables: { name: string; columns: string[]; rows: Cell[][] }[];
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

async function readDatabase(db: D1DatabaseHandle): Promise<DatabaseDump> {
  const { results: schema } = await db
    .prepare(
      `SELECT type, name, sql FROM sqlite_master
        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid`,
    )
    .all<{ type: string; name: string; sql: string }>();
  const dump: DatabaseDump = { schema, tables: [] };
  for (const { name } of schema.filter((entry) => entry.type === 'table')) {
    const { results: info } = await db.prepare(`PRAGMA table_info(${quote(name)})`).all<{ name: string }>();
    const columns = info.map((c) => c.name);
    const select = columns
      .map((c, i) => `typeof(${quote(c)}) AS t${i}, CAST(${quote(c)} AS TEXT) AS v${i}`)
      .join(', ');
    const { results } = await db
      .prepare(`SELECT ${select} FROM ${quote(name)}`)
      .all<Record<string, string | null>>();
    const rows = results.map((row) =>
      columns.map((column, i): Cell => {
        const type = row[`t${i}`];
        if (type === 'null') return ['null'];
        // Nothing the store writes is REAL or BLOB; refuse to dump what this file could not restore exactly.
        if (type !== 'integer' && type !== 'text') throw new Error(`${name}.${column} holds a ${type}`);
        return [type, row[`v${i}`] as string];
      }),
    );
    rows.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    dump.tables.push({ name, columns, rows });
  }
  return dump;
}

async function writeDatabase(db: D1DatabaseHandle, dump: DatabaseDump): Promise<void> {
  const statements = dump.schema.map((entry) => db.prepare(entry.sql));
  for (const table of dump.tables) {
    const columns = table.columns.map(quote).join(', ');
    for (const row of table.rows) {
      const values = row.map(([type]) =>
        type === 'null' ? 'NULL' : type === 'integer' ? 'CAST(? AS INTEGER)' : '?',
      );
      const bound = row.flatMap((cell) => (cell[0] === 'null' ? [] : [cell[1]]));
      const insert = `INSERT INTO ${quote(table.name)} (${columns}) VALUES (${values.join(', ')})`;
      statements.push(db.prepare(insert).bind(...bound));
    }
  }
  // One batch: one transaction, as D1 runs it.
  await db.batch(statements);
}

/** D1 in miniflare: every capture and restore gets a database of its own (a fresh in-memory D1). */
export async function d1Backend(): Promise<CorpusBackend> {
  return {
    async capture() {
      const server = await launchD1();
      const store = d1Store({ binding: server.info.db });
      await store.migrate();
      return {
        store,
        dump: async (into) => writeJson(into, DUMP_FILE, await readDatabase(server.info.db)),
        async close() {
          await store.close();
          await server.stop();
        },
      };
    },
    async restore(from) {
      const server = await launchD1();
      await writeDatabase(server.info.db, readJson<DatabaseDump>(from, DUMP_FILE));
      const store = d1Store({ binding: server.info.db });
      await store.migrate();
      return {
        store,
        async close() {
          await store.close();
          await server.stop();
        },
      };
    },
    async stop() {},
  };
}
