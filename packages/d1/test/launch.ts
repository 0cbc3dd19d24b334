import type { NewMessage } from '@agentstore/core';
import { type D1LaunchInfo, type LaunchedServer, launchD1 } from '@agentstore/servers';
import type { D1DatabaseLike } from '../src/index.ts';

/** One Miniflare D1 database per test file. */
export async function launchTestD1(): Promise<LaunchedServer<D1LaunchInfo> & { db: D1DatabaseLike }> {
  const server = await launchD1();
  const db: D1DatabaseLike = server.info.db;
  return { ...server, db };
}

let counter = 0;
export const uniqueId = (label: string) => `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export const message = (id: string, fields: Partial<NewMessage> = {}): NewMessage => ({
  id,
  role: 'user',
  content: `content of ${id}`,
  createdAt: new Date().toISOString(),
  ...fields,
});
