// A store module for the `agentstore` CLI: the SQLite file named by AGENTSTORE_SQLITE_PATH.
import { sqliteStore } from '@agentstore/sqlite';

export default function store() {
  const path = process.env.AGENTSTORE_SQLITE_PATH;
  if (!path) throw new Error('set AGENTSTORE_SQLITE_PATH to the SQLite file to open');
  return sqliteStore({ path });
}
