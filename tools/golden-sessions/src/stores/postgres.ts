import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresStore } from '@agentstore/postgres';
import { findBinary, launchPostgres } from '@agentstore/servers';
import pg from 'pg';
import { readJson, writeJson } from '../corpus-files.ts';
import { type CorpusBackend, freshName } from './backend.ts';

/** The schema the corpus was written in (a database of its own is the fresh namespace). */
const SCHEMA = 'agentstore';
const SCHEMA_FILE = 'schema.sql';
const ROWS_FILE = 'rows.json';

/** Every row of every table of the schema, each value as Postgres's own text form (null for NULL). */
interface RowsDump {
  schema: string;
  tables: { name: string; columns: { name: string; type: string }[]; rows: (string | null)[][] }[];
}

const databaseUrl = (serverUrl: string, database: string) => {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
};

function pgDump(): string {
  const root = '/usr/lib/postgresql';
  // Debian keeps the binaries under /usr/lib/postgresql/<major>/bin; elsewhere PATH alone.
  const dirs = existsSync(root) ? readdirSync(root).map((major) => join(root, major, 'bin')) : [];
  const binary = findBinary('pg_dump', dirs);
  if (!binary)
    throw new Error('pg_dump not found: install the postgresql client (apt-get install -y postgresql)');
  return binary;
}

async function readRows(pool: pg.Pool, schema: string): Promise<RowsDump> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
    [schema],
  );
  const dump: RowsDump = { schema, tables: [] };
  for (const { name } of tables) {
    const { rows: columns } = await pool.query<{ name: string; type: string }>(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
        WHERE attrelid = format('%I.%I', $1::text, $2::text)::regclass AND attnum > 0 AND NOT attisdropped
        ORDER BY attnum`,
      [schema, name],
    );
    const list = columns.map((c) => `"${c.name}"::text`).join(', ');
    const { rows } = await pool.query<(string | null)[]>({
      text: `SELECT ${list} FROM "${schema}"."${name}"`,
      rowMode: 'array',
    });
    rows.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    dump.tables.push({ name, columns, rows });
  }
  return dump;
}

export async function postgresBackend(): Promise<CorpusBackend> {
  const server = await launchPostgres();
  const admin = new pg.Pool({ connectionString: server.info.url, max: 2 });
  admin.on('error', () => {}); // an idle client dropped at shutdown must not crash the process
  const freshDatabase = async (label: string) => {
    const name = `golden_${label}_${freshName()}`;
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = databaseUrl(server.info.url, name);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    const drop = async () => {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    };
    return { url, pool, drop };
  };
  return {
    async capture() {
      const db = await freshDatabase('capture');
      const store = postgresStore({ pool: db.pool }, { schema: SCHEMA });
      await store.migrate();
      return {
        store,
        async dump(into) {
          // The DDL as pg_dump sees it, without psql's meta-commands (\restrict…): plain SQL.
          const ddl = execFileSync(
            pgDump(),
            ['--schema-only', '--no-owner', '--no-privileges', '--schema', SCHEMA, '--dbname', db.url],
            { encoding: 'utf8' },
          );
          const sql = ddl
            .split('\n')
            .filter((line) => !line.startsWith('\\'))
            .join('\n');
          writeFileSync(join(into, SCHEMA_FILE), sql);
          writeJson(into, ROWS_FILE, await readRows(db.pool, SCHEMA));
        },
        async close() {
          await store.close();
          await db.drop();
        },
      };
    },
    async restore(from) {
      const db = await freshDatabase('restore');
      const dump = readJson<RowsDump>(from, ROWS_FILE);
      // pg_dump's script sets search_path to '': run it on a connection of its own.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query(readFileSync(join(from, SCHEMA_FILE), 'utf8'));
        await client.query('BEGIN');
        for (const table of dump.tables) {
          const columns = table.columns.map((c) => `"${c.name}"`).join(', ');
          // Text parameters, parsed by each column's own input function: byte for byte.
          const values = table.columns.map((c, i) => `$${i + 1}::${c.type}`).join(', ');
          const insert = `INSERT INTO "${dump.schema}"."${table.name}" (${columns}) VALUES (${values})`;
          for (const row of table.rows) await client.query(insert, row);
        }
        await client.query('COMMIT');
      } finally {
        await client.end();
      }
      const store = postgresStore({ pool: db.pool }, { schema: dump.schema });
      // What an upgraded deployment runs first: the current migrations over the old schema.
      await store.migrate();
      return {
        store,
        async close() {
          await store.close();
          await db.drop();
        },
      };
    },
    async stop() {
      await admin.end();
      await server.stop();
    },
  };
}
