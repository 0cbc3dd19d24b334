import { sqliteStore } from '@agentstore/sqlite';
import { inject } from 'vitest';
import { type Studio, type StudioOptions, startStudio } from '../../src/index.ts';

/** A studio over the seeded file, opened read-only as `agentstore studio` opens it. */
export async function seededStudio(
  options: Omit<StudioOptions, 'store'> = {},
): Promise<Studio & { origin: string; token: string }> {
  const store = sqliteStore({ path: inject('dbPath') }, { readOnly: true });
  const studio = await startStudio({ store, ...options });
  const url = new URL(studio.url);
  return {
    ...studio,
    origin: url.origin,
    token: url.searchParams.get('token')!,
    async close() {
      await studio.close();
      await store.close();
    },
  };
}
